"""A busy SQLite database delays a turn's lease instead of failing its prompt (the outside
probe's finding 5: 1 prompt in 1,402 failed with "The session's turn lease could not be
read or written" under load, with nothing in the log saying why). Another writer holds the
database's write lock here past the engine's busy timeout, as a burst of writers does."""

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence import sqlite as sqlite_engine
from adapters.persistence.engine import make_engine
from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.errors import StorageError
from domain.ids import SessionId
from tests.factories import T0, SessionFactory
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration

LATER = T0 + timedelta(seconds=30)


@pytest.fixture
async def busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AsyncEngine]:
    """An engine whose connections give up on a held lock after 50 ms (not 10 s)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    upgrade_to_head(url)
    monkeypatch.setattr(sqlite_engine, "BUSY_TIMEOUT_MS", 50)
    engine = make_engine(url)
    yield engine
    await engine.dispose()


async def stored_session(engine: AsyncEngine) -> SessionId:
    session = SessionFactory()
    async with SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False)) as uow:
        await uow.sessions.add(session)
        await uow.commit()
    return session.id


def locked(path: Path) -> sqlite3.Connection:
    """Another writer, holding the write lock until it is closed."""
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    return writer


async def test_a_lease_waits_for_a_busy_database_instead_of_failing(
    busy: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sid = await stored_session(busy)
    leases = SqlAlchemyTurnLeases(busy)
    writer = locked(tmp_path / "sessions.db")
    caplog.set_level(logging.INFO, "adapters.persistence")
    taking = asyncio.ensure_future(leases.acquire(sid, "me", T0, LATER))
    async with asyncio.timeout(PATIENCE):  # until it has met the lock at least once
        while "waits for a busy database" not in caplog.text:
            await asyncio.sleep(0.01)
    assert not taking.done()
    writer.rollback()
    writer.close()
    assert await asyncio.wait_for(taking, PATIENCE) is True
    assert await leases.live_holder(sid, T0) == "me"


async def test_past_its_patience_the_lease_fails_and_the_log_says_why(
    busy: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sid = await stored_session(busy)
    leases = SqlAlchemyTurnLeases(busy, patience=0.2)
    writer = locked(tmp_path / "sessions.db")
    try:
        with pytest.raises(StorageError, match="turn lease"):
            await leases.acquire(sid, "me", T0, LATER)
    finally:
        writer.close()
    failure = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert failure and "database is locked" in failure[-1].getMessage()
