"""forks share their parent's messages; deleted parents stay as tombstones

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import UtcDateTime, short_text

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("parent_id", short_text(64), nullable=True))
        batch.add_column(sa.Column("fork_position", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("deleted_at", UtcDateTime(), nullable=True))
        batch.drop_index("ix_sessions_cwd_updated")
        batch.drop_index("ix_sessions_updated")
        batch.create_index("ix_sessions_cwd_updated", ["cwd", "updated_at", "id"])
        batch.create_index("ix_sessions_updated", ["updated_at", "id"])
        batch.create_index("ix_sessions_parent_id", ["parent_id"])


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_index("ix_sessions_parent_id")
        batch.drop_index("ix_sessions_updated")
        batch.drop_index("ix_sessions_cwd_updated")
        batch.create_index("ix_sessions_cwd_updated", ["cwd", "updated_at"])
        batch.create_index("ix_sessions_updated", ["updated_at"])
        batch.drop_column("deleted_at")
        batch.drop_column("fork_position")
        batch.drop_column("parent_id")
