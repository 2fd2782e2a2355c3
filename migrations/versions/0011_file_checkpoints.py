"""file checkpoints: a file's state before the agent first changed it in a turn, and the
prior bytes, once per session and state

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "file_checkpoints",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "session_id",
            short_text(64),
            sa.ForeignKey(
                "sessions.id",
                ondelete="CASCADE",
                name="fk_file_checkpoints_session_id_sessions",
            ),
            nullable=False,
        ),
        sa.Column("message_id", short_text(64), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("prior", short_text(64), nullable=False),
        sa.Column("after", short_text(64), nullable=True),
        sa.Column("unrestorable", short_text(32), nullable=True),
        sa.PrimaryKeyConstraint("seq", name="pk_file_checkpoints"),
    )
    op.create_index(
        "ix_file_checkpoints_session_message", "file_checkpoints", ["session_id", "message_id"]
    )
    op.create_table(
        "checkpoint_blobs",
        sa.Column(
            "session_id",
            short_text(64),
            sa.ForeignKey(
                "sessions.id",
                ondelete="CASCADE",
                name="fk_checkpoint_blobs_session_id_sessions",
            ),
            nullable=False,
        ),
        sa.Column("state", short_text(64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", "state", name="pk_checkpoint_blobs"),
    )


def downgrade() -> None:
    op.drop_table("checkpoint_blobs")
    op.drop_index("ix_file_checkpoints_session_message", table_name="file_checkpoints")
    op.drop_table("file_checkpoints")
