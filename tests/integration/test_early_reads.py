"""The standard-library listing used while the agent loads reads what the SQLAlchemy
repository reads: the same sessions, fields and order, page after page."""

import sqlite3
from collections.abc import Callable
from datetime import UTC, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence import tables
from adapters.persistence.early_reads import EarlySessionPages, NotReadableEarly, database_file
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.sessions.listing import read_page
from domain.ids import SessionId
from tests.factories import T0, SessionFactory

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite")]  # reads SQLite files

Uows = Callable[[], SqlAlchemyUnitOfWork]


async def seed(uow_factory: Uows) -> None:
    """Sessions in two cwds, updates tied in pairs, extra directories, titles and none,
    a text needing repair, a deleted parent kept for its fork (hidden)."""
    async with uow_factory() as uow:
        for i in range(14):
            session = SessionFactory(
                id=SessionId(f"s{i:02d}"),
                cwd="/p/a" if i % 3 else "/p/b",
                title=None if i % 4 == 0 else f"Session {i}",
                additional_directories=("/x", "/y") if i % 5 == 0 else (),
                updated_at=T0 + timedelta(seconds=i // 2, microseconds=7),
            )
            await uow.sessions.add(session)
        parent = SessionFactory(id=SessionId("parent"), cwd="/p/a")
        await uow.sessions.add(parent)
        await uow.sessions.fork(parent, SessionFactory(id=SessionId("child"), cwd="/p/a"))
        await uow.sessions.delete(parent.id, T0)
        await uow.commit()


@pytest.mark.parametrize("cwd", [None, "/p/a", "/p/b", "/p/none"])
async def test_every_page_is_the_repositorys(
    uow_factory: Uows, database_url: str, cwd: str | None
) -> None:
    await seed(uow_factory)
    early = EarlySessionPages(Path(make_url(database_url).database or ""))
    cursor: str | None = None
    pages = 0
    while True:
        async with uow_factory() as uow:
            expected = await read_page(uow.listing, cwd, cursor, page_size=3)
        assert await read_page(early, cwd, cursor, page_size=3) == expected
        pages += 1
        if expected.next_cursor is None:
            break
        cursor = expected.next_cursor
    assert pages > 1 or cwd == "/p/none"


async def test_a_json_column_is_repaired_as_the_engine_repairs_it(
    uow_factory: Uows, engine: AsyncEngine, database_url: str
) -> None:
    await seed(uow_factory)
    async with engine.begin() as db:
        await db.execute(
            update(tables.sessions)
            .where(tables.sessions.c.id == "s05")
            .values(additional_directories=["/bad\ud800dir"])
        )
    early = EarlySessionPages(Path(make_url(database_url).database or ""))
    async with uow_factory() as uow:
        expected = await uow.listing.list_page(cwd=None, after=None, limit=100)
    assert await early.list_page(cwd=None, after=None, limit=100) == expected
    assert "/bad\ufffddir" in {d for s in expected for d in s.additional_directories}


async def test_a_cursor_from_another_zone_finds_the_same_place(
    uow_factory: Uows, database_url: str
) -> None:
    await seed(uow_factory)
    early = EarlySessionPages(Path(make_url(database_url).database or ""))
    moment = (T0 + timedelta(seconds=3, microseconds=7)).astimezone(timezone(timedelta(hours=5)))
    after = (moment, "s07")
    async with uow_factory() as uow:
        expected = await uow.listing.list_page(cwd=None, after=after, limit=100)
    assert await early.list_page(cwd=None, after=after, limit=100) == expected
    assert expected and all(s.updated_at.tzinfo is UTC for s in expected)


async def test_no_database_or_an_older_schema_is_left_to_the_agent(tmp_path: Path) -> None:
    missing = EarlySessionPages(tmp_path / "none.db")
    with pytest.raises(NotReadableEarly):
        await missing.list_page(cwd=None, after=None, limit=1)
    older = tmp_path / "older.db"
    with sqlite3.connect(older) as db:
        db.execute("CREATE TABLE alembic_version (version_num TEXT)")
        db.execute("INSERT INTO alembic_version VALUES ('0001')")
    with pytest.raises(NotReadableEarly):
        await EarlySessionPages(older).list_page(cwd=None, after=None, limit=1)
    unmigrated = tmp_path / "empty.db"
    sqlite3.connect(unmigrated).close()
    with pytest.raises(sqlite3.Error):
        await EarlySessionPages(unmigrated).list_page(cwd=None, after=None, limit=1)


@pytest.mark.parametrize(
    "url",
    ["sqlite+aiosqlite:////abs/s.db", "sqlite:////abs/s.db", "sqlite+aiosqlite:///rel/s.db"],
)
def test_a_plain_url_names_the_file_sqlalchemy_would_open(url: str) -> None:
    assert database_file(url) == Path(make_url(url).database or "")


@pytest.mark.parametrize(
    "url",
    [
        "sqlite+aiosqlite://",
        "sqlite+aiosqlite:///:memory:",
        "sqlite+aiosqlite:///s.db?mode=ro",
        "sqlite+aiosqlite:///a%20b.db",
        "postgresql://h/db",
    ],
)
def test_anything_fancier_is_left_to_the_agent(url: str) -> None:
    assert database_file(url) is None
