"""The one place that knows how we talk to SQLite."""

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from adapters.persistence.json_columns import load_json

BUSY_TIMEOUT_MS = 10_000


def _on_connect(dbapi_connection: Any, _record: object) -> None:
    # Take transaction control from the driver so that `begin` below decides how to BEGIN.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, nor it them
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=FULL")  # a committed message survives power loss too
    cursor.close()


READ_ONLY = "iac_code_read_only"  # an execution option: the transaction only reads


def _on_begin(connection: Connection) -> None:
    # IMMEDIATE takes the write lock up front: a deferred BEGIN that upgrades to a write
    # gets SQLITE_BUSY at once, without waiting for busy_timeout. Work that only reads
    # takes no lock at all (WAL: it sees the last commit, and never waits for a writer).
    if connection.get_execution_options().get(READ_ONLY):
        connection.exec_driver_sql("BEGIN")
    else:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def make_sqlite_engine(url: str) -> AsyncEngine:
    parsed = make_url(url)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(parsed, json_deserializer=load_json)
    event.listen(engine.sync_engine, "connect", _on_connect)
    event.listen(engine.sync_engine, "begin", _on_begin)
    return engine


def read_only(engine: AsyncEngine) -> AsyncEngine:
    """The engine for work that only reads (see READ_ONLY)."""
    return engine.execution_options(**{READ_ONLY: True})


def sync_url(url: str) -> str:
    """The same database through the standard library driver (migrations run synchronously)."""
    parsed = make_url(url)
    return parsed.set(drivername=parsed.get_backend_name()).render_as_string(hide_password=False)
