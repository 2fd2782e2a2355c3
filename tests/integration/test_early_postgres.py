"""The asyncpg listing used while the agent loads on PostgreSQL reads what the SQLAlchemy
repository reads: the same sessions, fields and order, page after page, filter after
filter; and it leaves every store it cannot read as the agent would to the agent."""

import asyncio
import time
from datetime import UTC, timedelta, timezone
from typing import cast

import asyncpg
import pytest
from sqlalchemy import text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.acp_v1.listing import plain_list_result
from adapters.persistence import tables
from adapters.persistence.early_postgres import EarlyPostgresPages
from adapters.persistence.early_postgres_opening import APP_NAME, EarlyConnections, postgres_dsn
from adapters.persistence.early_reads import NotReadableEarly
from adapters.persistence.schema_head import SCHEMA_HEAD
from adapters.protocol.connection import Connection
from application.sessions.listing import read_page
from bootstrap.early import early_answers
from domain.ids import SessionId
from tests.factories import T0, SessionFactory
from tests.integration.test_early_reads import Uows, seed
from tests.support.patience import PATIENCE
from tests.support.postgres import scratch_database

PEER = cast(Connection, None)  # the early list answers whoever asks

pytestmark = [pytest.mark.integration, pytest.mark.backends("postgres")]


def early(database_url: str) -> EarlyPostgresPages:
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    return EarlyPostgresPages(dsn)


@pytest.mark.parametrize("page_size", [2, 3])  # a page's end between two tied updates, or not
@pytest.mark.parametrize("cwd", [None, "/p/a", "/p/b", "/p/none"])
async def test_every_page_is_the_repositorys(
    uow_factory: Uows, database_url: str, cwd: str | None, page_size: int
) -> None:
    await seed(uow_factory)
    pages = early(database_url)
    cursor: str | None = None
    seen = 0
    while True:
        async with uow_factory() as uow:
            expected = await read_page(uow.listing, cwd, cursor, page_size=page_size)
        assert await read_page(pages, cwd, cursor, page_size=page_size) == expected
        seen += len(expected.sessions)
        if expected.next_cursor is None:
            break
        cursor = expected.next_cursor
    # seed: 14 sessions, one in three in /p/b, the forked child and deleted parent hidden
    assert seen == {None: 15, "/p/a": 10, "/p/b": 5, "/p/none": 0}[cwd]


async def test_every_limit_cuts_where_the_repositorys_does(
    uow_factory: Uows, database_url: str
) -> None:
    """Updates are tied in pairs: odd limits end inside a tie, which the id breaks."""
    await seed(uow_factory)
    pages = early(database_url)
    for limit in range(1, 17):
        async with uow_factory() as uow:
            expected = await uow.listing.list_page(cwd=None, after=None, limit=limit)
        assert await pages.list_page(cwd=None, after=None, limit=limit) == expected


async def test_stored_texts_come_back_as_the_engine_reads_them(
    uow_factory: Uows, engine: AsyncEngine, database_url: str
) -> None:
    """A NUL in a path or title (stored escaped on PostgreSQL), a text starting with the
    escape's own marker, a JSON column repaired as read."""
    odd_cwd = "/p/nul\x00dir"
    async with uow_factory() as uow:
        await uow.sessions.add(SessionFactory(id=SessionId("s-nul"), cwd=odd_cwd, title="a\x00b"))
        await uow.sessions.add(SessionFactory(id=SessionId("s-mark"), cwd="/p/a", title="\uffffx"))
        await uow.sessions.add(SessionFactory(id=SessionId("s-json"), cwd="/p/a"))
        await uow.commit()
    async with engine.begin() as db:  # what an older server wrote before repairing on entry
        await db.execute(
            update(tables.sessions)
            .where(tables.sessions.c.id == "s-json")
            .values(additional_directories=text("""'["/bad\\ud800dir"]'::json"""))
        )
    pages = early(database_url)
    for cwd in (None, odd_cwd, "/p/a"):
        async with uow_factory() as uow:
            expected = await uow.listing.list_page(cwd=cwd, after=None, limit=100)
        assert await pages.list_page(cwd=cwd, after=None, limit=100) == expected
    listed = await pages.list_page(cwd=None, after=None, limit=100)
    assert {s.title for s in listed} >= {"a\x00b", "\uffffx"}
    assert ("/bad\ufffddir",) in {s.additional_directories for s in listed}


async def test_a_cursor_from_another_zone_finds_the_same_place(
    uow_factory: Uows, database_url: str
) -> None:
    await seed(uow_factory)
    moment = (T0 + timedelta(seconds=3, microseconds=7)).astimezone(timezone(timedelta(hours=5)))
    after = (moment, "s07")
    async with uow_factory() as uow:
        expected = await uow.listing.list_page(cwd=None, after=after, limit=100)
    assert await early(database_url).list_page(cwd=None, after=after, limit=100) == expected
    assert expected and all(s.updated_at.tzinfo is UTC for s in expected)


async def test_a_sessions_children_are_left_to_the_agent(
    uow_factory: Uows, database_url: str
) -> None:
    await seed(uow_factory)
    with pytest.raises(NotReadableEarly):
        await early(database_url).list_page(cwd=None, after=None, limit=10, parent="s01")


async def test_an_older_or_unmigrated_schema_is_left_to_the_agent(database_url: str) -> None:
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    db = await asyncpg.connect(dsn)
    try:
        await db.execute("UPDATE alembic_version SET version_num = '0001'")
        with pytest.raises(NotReadableEarly, match="not the newest"):
            await early(database_url).list_page(cwd=None, after=None, limit=1)
        await db.execute("DELETE FROM alembic_version")
        with pytest.raises(NotReadableEarly, match="not the newest"):
            await early(database_url).list_page(cwd=None, after=None, limit=1)
    finally:
        await db.execute("DELETE FROM alembic_version")
        await db.execute("INSERT INTO alembic_version VALUES ($1)", SCHEMA_HEAD)
        await db.close()
    with scratch_database("early") as empty, pytest.raises(NotReadableEarly):  # no tables
        await early(empty).list_page(cwd=None, after=None, limit=1)


async def test_an_unreachable_server_or_database_is_left_to_the_agent(database_url: str) -> None:
    missing = database_url.rsplit("/", 1)[0] + "/iac_no_such_database"
    with pytest.raises(NotReadableEarly):
        await early(missing).list_page(cwd=None, after=None, limit=1)
    with pytest.raises(NotReadableEarly):  # port 9: discard, nothing listens there
        await EarlyPostgresPages("postgresql://postgres@127.0.0.1:9/x").list_page(
            cwd=None, after=None, limit=1
        )


async def _early_connections(dsn: str) -> int:
    """Connections the early reader holds open on the server, as pg_stat_activity says."""
    db = await asyncpg.connect(dsn)
    try:
        count = await db.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = $1 AND datname = current_database()",
            APP_NAME,
        )
    finally:
        await db.close()
    return int(count)


async def _until_early_connections(dsn: str, count: int) -> None:
    deadline = time.monotonic() + PATIENCE
    while await _early_connections(dsn) != count:
        assert time.monotonic() < deadline, f"never {count} early connections"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("cwd", [None, "/p/a"])
@pytest.mark.parametrize("second_page", [False, True])
async def test_a_connection_opened_ahead_serves_the_first_read_then_closes(
    uow_factory: Uows, database_url: str, cwd: str | None, second_page: bool
) -> None:
    """Each shape of the statement (a cwd or none, a cursor or none) as prepared ahead."""
    await seed(uow_factory)
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    async with uow_factory() as uow:
        first = await read_page(uow.listing, cwd, None, page_size=4)
        cursor = first.next_cursor if second_page else None
        expected = await read_page(uow.listing, cwd, cursor, page_size=4)
    pages = EarlyPostgresPages(dsn)
    pages.connect_ahead(keep=PATIENCE)
    await _until_early_connections(dsn, 1)  # open before any read asks for it
    assert await read_page(pages, cwd, cursor, page_size=4) == expected
    await _until_early_connections(dsn, 0)  # used once, then closed
    assert await read_page(pages, cwd, cursor, page_size=4) == expected  # on a new one


async def test_a_connection_opened_ahead_and_never_used_is_closed(database_url: str) -> None:
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    EarlyPostgresPages(dsn).connect_ahead(keep=0.2)
    await _until_early_connections(dsn, 1)
    await _until_early_connections(dsn, 0)


async def test_a_connection_opened_ahead_locks_no_table_while_it_waits(
    uow_factory: Uows, database_url: str
) -> None:
    """Else a migration (or TRUNCATE) of the sessions table would wait until it is used."""
    await seed(uow_factory)
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    pages = EarlyPostgresPages(dsn)
    await asyncio.wait([pages.connect_ahead(keep=PATIENCE)])
    db = await asyncpg.connect(dsn)
    try:
        locks = await db.fetchval(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
            " WHERE a.application_name = $1 AND a.datname = current_database()"
            " AND l.locktype = 'relation'",
            APP_NAME,
        )
    finally:
        await db.close()
    assert locks == 0
    assert await pages.list_page(cwd=None, after=None, limit=2)  # still prepared, and used
    await _until_early_connections(dsn, 0)


async def test_a_failed_connection_ahead_leaves_the_read_its_own_try() -> None:
    pages = EarlyPostgresPages("postgresql://postgres@127.0.0.1:9/x")  # nothing listens on 9
    pages.connect_ahead(keep=PATIENCE)
    with pytest.raises(NotReadableEarly):
        await pages.list_page(cwd=None, after=None, limit=1)


async def test_the_opening_settles_once_its_connection_is_open(database_url: str) -> None:
    """The agent's imports wait for this (bootstrap/heavy_imports.py)."""
    dsn = postgres_dsn(database_url)
    assert dsn is not None
    early = early_answers(database_url)
    assert await asyncio.to_thread(early.settled.wait, PATIENCE)
    assert await _early_connections(dsn) == 1  # open, not still opening
    assert await early.answers["session/list"]({}, PEER) is not None  # taken: then closed
    await _until_early_connections(dsn, 0)


async def test_a_list_sent_at_once_takes_the_connection_opened_ahead(
    uow_factory: Uows, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent before the opening has even begun: it waits for it, opening none of its own."""
    await seed(uow_factory)
    async with uow_factory() as uow:
        expected = await read_page(uow.listing, None, None, page_size=50)
    opened: list[str] = []
    connect = EarlyConnections._connect

    async def counted(connections: EarlyConnections) -> object:
        opened.append(connections.dsn)
        return await connect(connections)

    monkeypatch.setattr(EarlyConnections, "_connect", counted)
    early = early_answers(database_url)
    assert await early.answers["session/list"]({}, PEER) == plain_list_result(expected)
    assert len(opened) == 1
    assert early.settled.is_set()
    await _until_early_connections(opened[0], 0)


async def test_an_unreachable_server_settles_the_opening_and_leaves_the_list_to_the_agent() -> None:
    early = early_answers("postgresql+asyncpg://postgres@127.0.0.1:9/x")  # nothing on port 9
    assert await early.answers["session/list"]({}, PEER) is None
    assert early.settled.is_set()  # failed: the agent's imports go on


@pytest.mark.parametrize(
    ("url", "dsn"),
    [
        (
            "postgresql+asyncpg://postgres@127.0.0.1:5432/test",
            "postgresql://postgres@127.0.0.1:5432/test",
        ),
        ("postgresql://u:p%40ss@db.example/app", "postgresql://u:p%40ss@db.example/app"),
        ("postgresql+asyncpg://h/db?ssl=require", None),
        ("postgresql+psycopg://h/db", None),
        ("postgresql+asyncpg://", None),
        ("sqlite+aiosqlite:///s.db", None),
    ],
)
def test_only_a_plain_url_is_read_early(url: str, dsn: str | None) -> None:
    assert postgres_dsn(url) == dsn
