"""permissions remembered per project

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import UtcDateTime, short_text

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "project_rules",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("cwd", sa.Text(), nullable=False),
        sa.Column("tool_name", short_text(100), nullable=False),
        sa.Column("command", sa.JSON(), nullable=True),
        sa.Column("exact", sa.Boolean(), nullable=True),
        sa.Column("grant_key", sa.Text(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("session_id", short_text(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project_rules")),
        sa.UniqueConstraint("cwd", "tool_name", "grant_key", name="uq_project_rules_grant"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("project_rules") as batch:
        batch.create_index("ix_project_rules_cwd_created", ["cwd", "created_at", "id"])


def downgrade() -> None:
    with op.batch_alter_table("project_rules") as batch:
        batch.drop_index("ix_project_rules_cwd_created")
    op.drop_table("project_rules")
