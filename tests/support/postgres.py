"""PostgreSQL for the tests: the server named by IAC_CODE_TEST_POSTGRES_URL, else the local
one (LOCAL) when it answers; each run (or test) works in a database of its own, created here
with a unique name and dropped after, so parallel runs on one server never meet. Unset and
no local server: the PostgreSQL tests are skipped, saying which URL was tried and how to
name another. Set but unreachable: they fail, loudly (CI must never skip them silently)."""

import asyncio
import functools
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
# The server every machine of this project runs (trust auth, a role allowed to create
# databases): the default, so a plain `make test` runs the PostgreSQL tests.
LOCAL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


class PostgresUnreachable(Exception):
    pass


def configured_url() -> str | None:
    """IAC_CODE_TEST_POSTGRES_URL if set, else LOCAL if it answers, else None."""
    url = os.environ.get(ENV, "").strip()
    if url:
        return url
    return LOCAL if _local_answers() else None


def server_url() -> str:
    """The server's URL; skips the calling test, saying why, when there is none."""
    url = configured_url()
    if url is None:
        pytest.skip(skip_reason())
    return url


def skip_reason() -> str:
    return (
        f"no PostgreSQL answered at {LOCAL}; start one there, or set {ENV} to another "
        "server's URL, to run the PostgreSQL tests"
    )


@functools.cache
def _local_answers() -> bool:
    """Asked once per test process: one connection, ten seconds at most."""
    try:
        _run(_execute(LOCAL, "SELECT 1"))
    except PostgresUnreachable:
        return False
    return True


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
