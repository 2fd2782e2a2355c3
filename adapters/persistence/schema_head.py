"""The newest schema revision, importable without SQLAlchemy (the start path checks it)."""

from collections.abc import Iterable, Sequence

# The newest revision in migrations/versions; a test keeps this in step with alembic.
SCHEMA_HEAD = "0014"

# What alembic stores: the rows to give `is_head`, on any driver.
REVISION_QUERY = "SELECT version_num FROM alembic_version"


def is_head(rows: Iterable[Sequence[object]]) -> bool:
    """Whether REVISION_QUERY's rows say the database is at the newest schema."""
    return [tuple(row) for row in rows] == [(SCHEMA_HEAD,)]
