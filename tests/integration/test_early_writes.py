"""The standard-library insert used while the agent loads writes the row the SQLAlchemy
repository writes, column for column, and writes nothing where it must leave the session
to the agent (issue 34: the first `session/new` answered before the agent loads)."""

import fcntl
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.early_reads import NotReadableEarly
from adapters.persistence.early_writes import EarlySessionWriter
from adapters.persistence.fresh_schema import sqlite_statements
from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.sqlite_schema import STATEMENTS
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.sessions.fresh_session import fresh_session
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.config import Catalog
from domain.ids import SessionId
from domain.modes import offered_modes
from domain.session import Session
from tests.factories import MessageFactory, SessionFactory
from tests.integration.test_fresh_schema import sqlite_schema

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite")]  # writes SQLite files

Uows = Callable[[], SqlAlchemyUnitOfWork]

CATALOG = Catalog(
    modes=offered_modes(allow_bypass=False),
    models=(),
    default_mode="accept_edits",
    default_thought_level="high",
)
AT = datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=UTC)


def sessions(suffix: str) -> list[Session]:
    """What session/new makes, and sessions exercising every column's encoding."""
    return [
        fresh_session(SessionId(f"new{suffix}"), "/p/a", AT, model="m", catalog=CATALOG),
        SessionFactory(
            id=SessionId(f"full{suffix}"),
            cwd="/p/é ✓",
            title="A title",
            created_at=AT.astimezone(timezone(timedelta(hours=-3))),
            updated_at=AT + timedelta(seconds=1),
            config={"thought_level": "low", "nested": {"a": [1, 2.5, None, True]}},
            additional_directories=("/x", "/y"),
            mcp_servers=({"name": "s", "command": "c", "args": ["-v"], "env": []},),
            system_prompt=ClientPrompt(mode=ClientPromptMode.APPEND, texts=("be brief",)),
            version=3,
        ),
        SessionFactory(id=SessionId(f"plain{suffix}"), created_at=AT.replace(microsecond=0)),
    ]


def database(database_url: str) -> Path:
    return Path(make_url(database_url).database or "")


def rows(path: Path, ids: list[str]) -> list[dict[str, Any]]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        found = [db.execute("SELECT * FROM sessions WHERE id = ?", (i,)).fetchone() for i in ids]
    finally:
        db.close()
    return [dict(row) for row in found]


async def test_the_row_is_the_repositorys_column_for_column(
    uow_factory: Uows, database_url: str, engine: AsyncEngine
) -> None:
    async with uow_factory() as uow:
        for session in sessions("-agent"):
            await uow.sessions.add(session)
        await uow.commit()
    writer = EarlySessionWriter(database(database_url))
    for session in sessions("-early"):
        writer.add(session)
    path = database(database_url)
    agent_rows = rows(path, [s.id for s in sessions("-agent")])
    early_rows = rows(path, [s.id for s in sessions("-early")])
    for theirs, mine in zip(agent_rows, early_rows, strict=True):
        assert {**mine, "id": theirs["id"]} == theirs
    async with uow_factory() as uow:  # and the agent reads it back as it was made
        for made in sessions("-early"):
            read = await uow.sessions.get(made.id)
            assert read is not None
            assert (read.cwd, read.created_at, read.updated_at) == (
                made.cwd,
                made.created_at,
                made.updated_at,
            )
            assert (read.config, read.mode_id, read.system_prompt) == (
                made.config,
                made.mode_id,
                made.system_prompt,
            )


def count(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])
    finally:
        db.close()


async def test_an_older_schema_is_left_to_the_agent(database_url: str, engine: AsyncEngine) -> None:
    path = database(database_url)
    db = sqlite3.connect(path)
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    db.commit()
    db.close()
    with pytest.raises(NotReadableEarly):
        EarlySessionWriter(path).add(sessions("")[0])
    assert count(path) == 0


async def test_a_database_another_writer_holds_is_left_to_the_agent(
    database_url: str, engine: AsyncEngine
) -> None:
    path = database(database_url)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's transaction, not ending soon
    try:
        with pytest.raises(NotReadableEarly, match="did not take it"):
            EarlySessionWriter(path).add(sessions("")[0])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert count(path) == 0


async def test_an_id_already_stored_is_refused_and_nothing_changes(
    database_url: str, engine: AsyncEngine
) -> None:
    path = database(database_url)
    writer = EarlySessionWriter(path)
    writer.add(sessions("")[0])
    with pytest.raises(NotReadableEarly):
        writer.add(sessions("")[0])
    assert count(path) == 1


def test_a_new_database_is_created_as_the_agent_creates_it(tmp_path: Path) -> None:
    early, agent = tmp_path / "new" / "early.db", tmp_path / "agent.db"
    EarlySessionWriter(early).add(sessions("")[0])
    assert not upgrade_to_head(f"sqlite+aiosqlite:///{early}")  # found current: left as is
    upgrade_to_head(f"sqlite+aiosqlite:///{agent}")
    assert sqlite_schema(early) == sqlite_schema(agent)
    assert count(early) == 1


def test_a_database_the_agent_is_creating_is_left_to_it(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with open(f"{path}.migrate-lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as upgrade_to_head holds it while it creates
        with pytest.raises(NotReadableEarly, match="creating"):
            EarlySessionWriter(path).add(sessions("")[0])
    assert not path.exists()


def test_the_start_paths_ddl_is_tables_py() -> None:
    assert sqlite_statements() == STATEMENTS, "run scripts/write-sqlite-schema"


async def test_a_session_with_history_is_left_to_the_agent(
    database_url: str, engine: AsyncEngine
) -> None:
    path = database(database_url)
    with pytest.raises(NotReadableEarly, match="history"):
        EarlySessionWriter(path).add(SessionFactory(messages=[MessageFactory()]))
    assert count(path) == 0
