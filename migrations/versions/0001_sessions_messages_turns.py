"""sessions, messages and turns

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import UtcDateTime, short_text

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", short_text(64), nullable=False),
        sa.Column("cwd", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("mode_id", short_text(64), nullable=False),
        sa.Column("model", short_text(200), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    op.create_index("ix_sessions_cwd_updated", "sessions", ["cwd", "updated_at"])
    op.create_index("ix_sessions_updated", "sessions", ["updated_at"])
    op.create_table(
        "messages",
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("id", short_text(64), nullable=False),
        sa.Column("role", short_text(16), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("interrupted", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            ondelete="CASCADE",
            name=op.f("fk_messages_session_id_sessions"),
        ),
        sa.PrimaryKeyConstraint("session_id", "position", name=op.f("pk_messages")),
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("finished_at", UtcDateTime(), nullable=True),
        sa.Column("stop_reason", short_text(32), nullable=True),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_read_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_write_tokens", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            ondelete="CASCADE",
            name=op.f("fk_turns_session_id_sessions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turns")),
    )
    op.create_index(op.f("ix_turns_session_id"), "turns", ["session_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_turns_session_id"), table_name="turns")
    op.drop_table("turns")
    op.drop_table("messages")
    op.drop_index("ix_sessions_updated", table_name="sessions")
    op.drop_index("ix_sessions_cwd_updated", table_name="sessions")
    op.drop_table("sessions")
