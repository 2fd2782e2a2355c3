"""routed requests (a request one replica hands to the replica running the session's
turn, and its outcome) and asked questions (a permission request pending on the turn's
replica, which every replica shows its own clients)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "routed_requests",
        sa.Column("id", short_text(64), nullable=False),
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("holder", short_text(128), nullable=False),
        sa.Column("sender", short_text(128), nullable=False),
        sa.Column("method", short_text(100), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("state", short_text(16), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_routed_requests"),
    )
    op.create_index("ix_routed_requests_holder", "routed_requests", ["holder", "state"])
    op.create_table(
        "asked_questions",
        sa.Column("id", short_text(64), nullable=False),
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("holder", short_text(128), nullable=False),
        sa.Column("subject", short_text(128), nullable=False),
        sa.Column("method", short_text(100), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_asked_questions"),
    )
    op.create_index("ix_asked_questions_session_id", "asked_questions", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_asked_questions_session_id", "asked_questions")
    op.drop_table("asked_questions")
    op.drop_index("ix_routed_requests_holder", "routed_requests")
    op.drop_table("routed_requests")
