"""a session's extra directories and MCP servers (names and settings, never secret values)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(
            sa.Column("additional_directories", sa.JSON(), nullable=False, server_default="[]")
        )
        batch.add_column(sa.Column("mcp_servers", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("mcp_servers")
        batch.drop_column("additional_directories")
