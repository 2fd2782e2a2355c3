"""PostgreSQL: index hashes of paths and command patterns (a btree entry holds ~2.7 kB)

A working directory or an "always allow" command pattern may be longer than PostgreSQL's
btree can hold in one index entry; SQLite has no such limit and keeps its indexes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    if not _postgresql():
        return
    op.drop_index("ix_sessions_cwd_updated", table_name="sessions")
    op.execute("CREATE INDEX ix_sessions_cwd_hash_updated ON sessions (md5(cwd), updated_at, id)")
    op.drop_constraint("uq_project_rules_grant", "project_rules", type_="unique")
    op.execute(
        "CREATE UNIQUE INDEX uq_project_rules_grant_hash "
        "ON project_rules (md5(cwd), tool_name, md5(grant_key))"
    )
    op.drop_index("ix_project_rules_cwd_created", table_name="project_rules")
    op.execute(
        "CREATE INDEX ix_project_rules_cwd_hash_created ON project_rules (md5(cwd), created_at, id)"
    )


def downgrade() -> None:
    if not _postgresql():
        return
    op.drop_index("ix_project_rules_cwd_hash_created", table_name="project_rules")
    op.create_index("ix_project_rules_cwd_created", "project_rules", ["cwd", "created_at", "id"])
    op.drop_index("uq_project_rules_grant_hash", table_name="project_rules")
    op.create_unique_constraint(
        "uq_project_rules_grant", "project_rules", ["cwd", "tool_name", "grant_key"]
    )
    op.drop_index("ix_sessions_cwd_hash_updated", table_name="sessions")
    op.create_index("ix_sessions_cwd_updated", "sessions", ["cwd", "updated_at", "id"])
