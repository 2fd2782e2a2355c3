"""child sessions: a sub-agent run stored as a session naming its parent session, the tool
call that started it and its agent

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("spawned_by", short_text(64), nullable=True))
        batch.add_column(sa.Column("spawn_call_id", short_text(128), nullable=True))
        batch.add_column(sa.Column("spawn_agent", short_text(100), nullable=True))
        batch.create_index("ix_sessions_spawned_by", ["spawned_by"])


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_index("ix_sessions_spawned_by")
        batch.drop_column("spawn_agent")
        batch.drop_column("spawn_call_id")
        batch.drop_column("spawned_by")
