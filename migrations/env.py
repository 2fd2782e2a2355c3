"""Alembic environment: SQLite synchronously through the standard library driver,
PostgreSQL through asyncpg (an async engine, the migrations run in `run_sync`).

Migrations never run inside the server's event loop: a caller either hands us a
connection (`config.attributes["connection"]`) or we open one from the URL.
"""

from alembic import context
from sqlalchemy import Connection, create_engine, pool
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from adapters.persistence.migrate import run_to_end
from adapters.persistence.tables import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or ""
    if make_url(url).get_backend_name() == "postgresql":
        run_to_end(_run_async(url))  # on a thread of its own if a loop runs here
        return
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
