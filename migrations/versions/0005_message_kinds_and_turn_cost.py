"""message kinds (commands, /clear, compaction) and what each turn cost

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from adapters.persistence.tables import short_text

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("kind", short_text(16), nullable=False, server_default="chat"))
        batch.add_column(sa.Column("meta", sa.JSON(), nullable=True))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("cost", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("cost")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("meta")
        batch.drop_column("kind")
