"""A new database is created at the newest schema in one step (fresh_schema.py) instead of
replaying every migration: both ways must leave the same schema, read back from the
database itself, on SQLite and on PostgreSQL."""

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from alembic import command
from sqlalchemy import Connection, create_engine, inspect, text

from adapters.persistence.migrate import SCHEMA_HEAD, alembic_config, upgrade_to_head
from tests.integration.test_migrations import on_postgres
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.integration
T = TypeVar("T")
Schema = dict[str, dict[str, Any]]


def schema_of(connection: Connection) -> Schema:
    """Every table's columns, keys, indexes and constraints as the database reports them;
    the order columns were added in is left out (a migration appends, create_all declares)."""
    reflected = inspect(connection)
    return {name: _table(reflected, name) for name in sorted(reflected.get_table_names())}


def _table(reflected: Any, name: str) -> dict[str, Any]:
    def by_name(items: list[dict[str, Any]]) -> list[str]:
        return sorted(repr(sorted(item.items())) for item in items)

    columns = {
        c["name"]: (str(c["type"]), c["nullable"], c["default"], c.get("autoincrement"))
        for c in reflected.get_columns(name)
    }
    return {
        "columns": columns,
        "primary key": reflected.get_pk_constraint(name),
        "foreign keys": by_name(reflected.get_foreign_keys(name)),
        "indexes": by_name(reflected.get_indexes(name)),
        "unique": by_name(reflected.get_unique_constraints(name)),
        "checks": by_name(reflected.get_check_constraints(name)),
    }


def sqlite_schema(path: Path) -> Schema:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            return schema_of(connection)
    finally:
        engine.dispose()


def test_sqlite_created_schema_is_the_migrated_one(tmp_path: Path) -> None:
    migrated, created = tmp_path / "migrated.db", tmp_path / "created.db"
    command.upgrade(alembic_config(f"sqlite+aiosqlite:///{migrated}"), "head")
    assert upgrade_to_head(f"sqlite+aiosqlite:///{created}") is True

    expected = sqlite_schema(migrated)
    assert set(expected) >= {"sessions", "messages", "alembic_version"}
    assert sqlite_schema(created) == expected
    assert _sqlite_revision(created) == SCHEMA_HEAD


def test_sqlite_created_database_is_current_then_migrates_as_usual(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    assert upgrade_to_head(url) is True
    assert upgrade_to_head(url) is False
    # alembic sees the revision it would have written: nothing left to run.
    command.upgrade(alembic_config(url), "head")
    assert _sqlite_revision(tmp_path / "db.sqlite") == SCHEMA_HEAD


def test_sqlite_empty_file_is_created_at_head(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()  # exists, holds nothing
    assert upgrade_to_head(f"sqlite+aiosqlite:///{path}") is True
    assert _sqlite_revision(path) == SCHEMA_HEAD


def test_sqlite_partly_migrated_database_is_migrated_not_created(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite+aiosqlite:///{path}"
    command.upgrade(alembic_config(url), "0003")
    assert upgrade_to_head(url) is True
    assert _sqlite_revision(path) == SCHEMA_HEAD
    migrated = tmp_path / "migrated.db"
    command.upgrade(alembic_config(f"sqlite+aiosqlite:///{migrated}"), "head")
    assert sqlite_schema(path) == sqlite_schema(migrated)


def _sqlite_revision(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("SELECT version_num FROM alembic_version").fetchone()[0])


@pytest.fixture
def two_postgres() -> Iterator[tuple[str, str]]:
    with scratch_database("migrated") as migrated, scratch_database("created") as created:
        yield migrated, created


def test_postgres_created_schema_is_the_migrated_one(two_postgres: tuple[str, str]) -> None:
    migrated, created = two_postgres
    command.upgrade(alembic_config(migrated), "head")
    assert upgrade_to_head(created) is True
    assert upgrade_to_head(created) is False

    expected = _on_postgres(migrated, schema_of)
    assert set(expected) >= {"sessions", "messages", "alembic_version"}
    assert _on_postgres(created, schema_of) == expected
    assert _on_postgres(created, _postgres_indexes) == _on_postgres(migrated, _postgres_indexes)
    assert _on_postgres(created, _postgres_revision) == SCHEMA_HEAD


def _postgres_indexes(connection: Connection) -> list[tuple[str, str]]:
    """The indexes' own definitions: expression indexes (md5(cwd)) included verbatim."""
    rows = connection.execute(
        text("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()")
    )
    return sorted((str(name), str(definition)) for name, definition in rows)


def _postgres_revision(connection: Connection) -> str:
    return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one())


def _on_postgres(url: str, work: Callable[[Connection], T]) -> T:
    return asyncio.run(on_postgres(url, work))
