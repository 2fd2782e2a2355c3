"""rewind undos: what the last rewind of a session cut (messages) and the files it restored
as they were before it, kept until undone or replaced, so the undo survives a restart

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rewind_undos",
        sa.Column(
            "session_id",
            short_text(64),
            sa.ForeignKey(
                "sessions.id",
                ondelete="CASCADE",
                name="fk_rewind_undos_session_id_sessions",
            ),
            nullable=False,
        ),
        sa.Column("token", short_text(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("to_message_id", short_text(64), nullable=False),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", name="pk_rewind_undos"),
    )


def downgrade() -> None:
    op.drop_table("rewind_undos")
