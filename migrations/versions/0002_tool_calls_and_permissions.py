"""tool calls as shown, and permission decisions

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import UtcDateTime, short_text

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_calls",
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("id", short_text(128), nullable=False),
        sa.Column("name", short_text(100), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("kind", short_text(32), nullable=False),
        sa.Column("status", short_text(32), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("locations", sa.JSON(), nullable=False),
        sa.Column("output", sa.JSON(), nullable=False),
        sa.Column("raw_output", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            ondelete="CASCADE",
            name=op.f("fk_tool_calls_session_id_sessions"),
        ),
        sa.PrimaryKeyConstraint("session_id", "id", name=op.f("pk_tool_calls")),
    )
    op.create_table(
        "permission_decisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("tool_call_id", short_text(128), nullable=False),
        sa.Column("tool_name", short_text(100), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("option", short_text(32), nullable=True),
        sa.Column("decided_by", short_text(32), nullable=False),
        sa.Column("decided_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            ondelete="CASCADE",
            name=op.f("fk_permission_decisions_session_id_sessions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_permission_decisions")),
    )
    op.create_index(
        op.f("ix_permission_decisions_session_id"), "permission_decisions", ["session_id"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_permission_decisions_session_id"), table_name="permission_decisions")
    op.drop_table("permission_decisions")
    op.drop_table("tool_calls")
