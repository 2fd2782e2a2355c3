"""PostgreSQL for the tests: the server is named by IAC_CODE_TEST_POSTGRES_URL; each run (or
test) works in a database of its own, created here with a unique name and dropped after, so
parallel runs on one server never meet. Unset: the PostgreSQL tests are skipped, saying so.
Set but unreachable: they fail, loudly (CI must never skip them silently)."""

import asyncio
import os
import secrets
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from adapters.persistence import tables

ENV = "IAC_CODE_TEST_POSTGRES_URL"
SKIP_REASON = (
    f"set {ENV} (e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test) "
    "to run the PostgreSQL tests"
)


class PostgresUnreachable(Exception):
    pass


def server_url() -> str:
    """The server's URL; skips the calling test when none is configured."""
    url = os.environ.get(ENV, "").strip()
    if not url:
        pytest.skip(SKIP_REASON)
    return url


def _run(work: Coroutine[Any, Any, Any]) -> Any:
    """From sync code, even on an event loop's thread (fixtures of async tests)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, work).result()


def _dsn(url: str, database: str | None = None) -> str:
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


async def _execute(url: str, *statements: str) -> None:
    try:
        connection = await asyncpg.connect(_dsn(url), timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise PostgresUnreachable(f"{ENV}={url}: PostgreSQL is unreachable: {exc}") from exc
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def scratch_database(label: str = "run") -> Iterator[str]:
    """A new, empty database on the test server; its SQLAlchemy URL. Dropped afterwards."""
    base = server_url()
    name = f"iac_test_{label}_{os.getpid()}_{secrets.token_hex(4)}"
    _run(_execute(base, f'CREATE DATABASE "{name}"'))
    try:
        yield (
            make_url(base)
            .set(drivername="postgresql+asyncpg", database=name)
            .render_as_string(hide_password=False)
        )
    finally:
        _run(_execute(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def empty_tables(url: str) -> None:
    """Every table of the schema emptied (the schema and its revision stay)."""
    names = ", ".join(t.name for t in tables.metadata.sorted_tables)
    _run(_execute(url, f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
