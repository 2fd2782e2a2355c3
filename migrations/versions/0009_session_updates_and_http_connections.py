"""the session journal (numbered session/updates) and HTTP connection records

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_updates",
        sa.Column("session_id", short_text(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", "seq", name="pk_session_updates"),
    )
    op.create_index("ix_session_updates_created_at", "session_updates", ["created_at"])
    op.create_table(
        "http_connections",
        sa.Column("id", short_text(200), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_http_connections"),
    )
    op.create_index("ix_http_connections_updated_at", "http_connections", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_http_connections_updated_at", table_name="http_connections")
    op.drop_table("http_connections")
    op.drop_index("ix_session_updates_created_at", table_name="session_updates")
    op.drop_table("session_updates")
