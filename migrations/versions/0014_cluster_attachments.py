"""cluster attachments: the replicas alive (a lease each renews) and which replica has
clients attached to which session, so that a turn's updates reach clients on other replicas

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import UtcDateTime, short_text

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "replicas",
        sa.Column("id", short_text(128), nullable=False),
        sa.Column("expires_at", UtcDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_replicas"),
    )
    op.create_table(
        "session_attachments",
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("replica_id", short_text(128), nullable=False),
        sa.Column("clients", sa.Integer, nullable=False),
        sa.Column("attached_at", UtcDateTime, nullable=False),
        sa.PrimaryKeyConstraint("session_id", "replica_id", name="pk_session_attachments"),
    )
    op.create_index("ix_session_attachments_replica_id", "session_attachments", ["replica_id"])


def downgrade() -> None:
    op.drop_index("ix_session_attachments_replica_id", "session_attachments")
    op.drop_table("session_attachments")
    op.drop_table("replicas")
