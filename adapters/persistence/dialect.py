"""What differs between the databases in the statements we build: the upserts, and
matching the long texts PostgreSQL indexes by hash."""

import importlib
from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Table, and_, func, literal
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

# The unit of work builds on a session, the one-transaction stores on a connection.
Database = AsyncSession | AsyncConnection


def dialect_name(db: Database) -> str:
    return db.dialect.name if isinstance(db, AsyncConnection) else db.get_bind().dialect.name


def _insert(db: Database, table: Table, row: Mapping[str, Any]) -> Any:
    return _insert_of(dialect_name(db))(table).values(dict(row))


@cache
def _insert_of(dialect: str) -> Callable[[Table], Any]:
    """Both dialects spell ON CONFLICT the same; each needs its own Insert construct. Each
    is imported where it is used: a server on SQLite never loads PostgreSQL's dialect
    (about 2 MiB and 20 ms at start)."""
    if dialect not in ("sqlite", "postgresql"):
        raise ValueError(f"no upsert for the {dialect} dialect")
    insert: Callable[[Table], Any] = importlib.import_module(
        f"sqlalchemy.dialects.{dialect}"
    ).insert
    return insert


def insert_or_update(
    db: Database, table: Table, row: Mapping[str, Any], keys: Collection[str]
) -> Any:
    """INSERT the row, or UPDATE its other columns where one with the same `keys` exists."""
    changed = {k: v for k, v in row.items() if k not in keys}
    return _insert(db, table, row).on_conflict_do_update(index_elements=list(keys), set_=changed)


def insert_or_ignore(db: Database, table: Table, row: Mapping[str, Any]) -> Any:
    """INSERT the row unless it would break a unique key: whichever it is (on PostgreSQL
    the key is an index over hashes, which a list of columns would not name)."""
    return _insert(db, table, row).on_conflict_do_nothing()


def same_text(db: Database, column: ColumnElement[str], value: str) -> ColumnElement[bool]:
    """`column = value`, said so that PostgreSQL uses the index over the column's hash
    (tables.py: paths and command patterns may be longer than a btree entry holds)."""
    if dialect_name(db) == "postgresql":
        return and_(func.md5(column) == func.md5(literal(value)), column == value)
    return column == value
