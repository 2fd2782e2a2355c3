"""A new database gets the newest schema in one step: the tables as tables.py declares them,
then the revision row alembic would have written at the end of its migrations (alembic's
"create_all, then stamp head"). Later releases migrate it like any other database.

Replaying every migration on an empty database took seconds on a first start (and loaded
alembic, mako and pygments); this takes milliseconds. tests/integration/test_fresh_schema.py
keeps both ways giving the same schema, on SQLite and on PostgreSQL."""

from typing import Any

from sqlalchemy import (
    Column,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    create_mock_engine,
    inspect,
)
from sqlalchemy.engine import Connection

from adapters.persistence.schema_head import SCHEMA_HEAD
from adapters.persistence.tables import metadata

# alembic's version table, spelled as alembic creates it (DefaultImpl.version_table_impl).
VERSIONS = Table(
    "alembic_version",
    MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)


def is_empty(connection: Connection) -> bool:
    """Whether the database holds none of our tables, nor a revision: nothing to migrate.
    Other applications' tables do not count (a shared PostgreSQL database)."""
    existing = set(inspect(connection).get_table_names())
    return existing.isdisjoint({*metadata.tables, VERSIONS.name})


def create_at_head(connection: Connection) -> None:
    """Create every table at the newest schema and record that revision, inside the
    connection's transaction (one step: a crash leaves an empty database, never half)."""
    metadata.create_all(connection)
    VERSIONS.create(connection)
    connection.execute(VERSIONS.insert().values(version_num=SCHEMA_HEAD))


def sqlite_statements() -> tuple[str, ...]:
    """The DDL `create_at_head` runs on SQLite, as text: what adapters/persistence/
    sqlite_schema.py holds for the start path, which creates a new database before
    SQLAlchemy has loaded (scripts/write-sqlite-schema writes it from this)."""
    statements: list[str] = []

    def record(statement: Any, *args: object, **kwargs: object) -> None:
        statements.append(str(statement.compile(dialect=engine.dialect)).strip())

    engine = create_mock_engine("sqlite://", record)
    metadata.create_all(engine, checkfirst=False)
    VERSIONS.create(engine, checkfirst=False)
    # The tables in create_all's order (a table after those it refers to), then the indexes
    # sorted: create_all emits a table's indexes in no fixed order.
    tables = [s for s in statements if s.startswith("CREATE TABLE")]
    return (*tables, *sorted(s for s in statements if s not in tables))
