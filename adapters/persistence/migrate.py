"""Schema upgrades. Alembic owns the schema of an existing database; a new one is created at
the newest revision in one step (adapters/persistence/fresh_schema.py)."""

import asyncio
import fcntl
import sqlite3
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url

import migrations
from adapters.persistence.engine import backend
from adapters.persistence.schema_head import REVISION_QUERY, SCHEMA_HEAD, is_head
from adapters.persistence.sqlite import sync_url

if TYPE_CHECKING:
    from alembic.config import Config

T = TypeVar("T")
# The advisory lock replicas take while they migrate one PostgreSQL database: any constant
# works, as long as every release uses the same one.
MIGRATION_LOCK = 0x1AC_C0DE


def migration_url(url: str) -> str:
    """The URL alembic runs on: SQLite through the standard library driver (synchronously),
    PostgreSQL through asyncpg (migrations/env.py bridges it)."""
    if backend(url) == "postgresql":
        from adapters.persistence.postgres import asyncpg_url

        return asyncpg_url(url).render_as_string(hide_password=False)
    return sync_url(url)


def alembic_config(url: str) -> "Config":  # alembic is imported lazily: it is slow
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.set_main_option("sqlalchemy.url", migration_url(url).replace("%", "%%"))
    return config


def _is_current(url: str) -> bool:
    """Checks the stored revision with the standard library: skips loading alembic at start."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return False
    path = Path(parsed.database)
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return is_head(db.execute(REVISION_QUERY))
    except sqlite3.Error:
        return False


def upgrade_to_head(url: str) -> bool:
    """Bring the database to the newest schema. Returns True if anything was migrated."""
    if backend(url) == "postgresql":
        return run_to_end(_upgrade_postgres(url))
    if _is_current(url):
        return False
    parsed = make_url(url)
    if not parsed.database or parsed.database == ":memory:":
        _upgrade_sqlite(url)
        return True
    database = Path(parsed.database)
    database.parent.mkdir(parents=True, exist_ok=True)
    # Two servers starting together on a new database must not both create the tables.
    with open(f"{database}.migrate-lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _is_current(url):  # the other process did it while we waited
                return False
            _upgrade_sqlite(url)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return True


def _upgrade_sqlite(url: str) -> None:
    """A new database is created at the newest schema; an existing one is migrated."""
    if _created_at_head(url):
        return
    from alembic import command

    command.upgrade(alembic_config(url), "head")


def _created_at_head(url: str) -> bool:
    """Creates the schema if the database is empty, in one transaction: the standard library
    driver would commit each CREATE on its own, so we BEGIN ourselves."""
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from adapters.persistence.fresh_schema import create_at_head, is_empty

    engine = create_engine(sync_url(url), poolclass=NullPool)
    event.listen(engine, "connect", _driver_leaves_transactions_to_us)
    event.listen(engine, "begin", lambda connection: connection.exec_driver_sql("BEGIN IMMEDIATE"))
    try:
        with engine.begin() as connection:
            if not is_empty(connection):
                return False
            create_at_head(connection)
            return True
    finally:
        engine.dispose()


def _driver_leaves_transactions_to_us(dbapi_connection: Any, _record: object) -> None:
    dbapi_connection.isolation_level = None


async def _upgrade_postgres(url: str) -> bool:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    engine = create_async_engine(migration_url(url), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            # Replicas starting together on a new database: one migrates while the others
            # wait here, then find it done. Held until the migration's transaction ends.
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
            )
            changed = await connection.run_sync(_upgrade_on, url)
            await connection.commit()
            return changed
    finally:
        await engine.dispose()


def _upgrade_on(connection: Connection, url: str) -> bool:
    """Migrate through `connection`, inside its transaction (PostgreSQL's DDL is transactional:
    a failed migration leaves nothing half done). An empty database is created at the newest
    schema instead, without loading alembic."""
    from adapters.persistence.fresh_schema import create_at_head, is_empty

    if is_empty(connection):
        create_at_head(connection)
        return True
    from alembic import command
    from alembic.migration import MigrationContext

    if MigrationContext.configure(connection).get_current_revision() == SCHEMA_HEAD:
        return False
    config = alembic_config(url)
    config.attributes["connection"] = connection
    command.upgrade(config, "head")
    return True


def run_to_end(work: Coroutine[Any, Any, T]) -> T:
    """Runs `work` to its end from synchronous code, even one called on an event loop's thread
    (there in a thread of its own: that loop cannot be blocked into running it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, work).result()
