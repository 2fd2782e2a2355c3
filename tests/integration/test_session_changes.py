"""Sessions write the changes they recorded, checked against what the writer knew: a
concurrent write is a conflict or a merge, never a silent overwrite. Holds for the real
store and for the fake the use-case tests use."""

import asyncio
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.sqlite import read_only
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.errors import SessionConflict
from application.history.saving import save, save_setting
from application.ports.unit_of_work import UnitOfWork
from domain.content import TextBlock
from domain.ids import SessionId
from domain.message import Message, Role
from domain.session import Session
from domain.session_changes import MessageAdded
from tests.factories import T0, MessageFactory, SessionFactory
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.unit_of_work import FakeUnitOfWork

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]

UowFactory = Callable[[], UnitOfWork]


@pytest.fixture
def uow(backend: str, engine: AsyncEngine) -> UowFactory:
    if backend == "memory":
        shared = InMemorySessionRepository()
        return lambda: FakeUnitOfWork(shared)
    writes = async_sessionmaker(engine, expire_on_commit=False)
    reads = async_sessionmaker(read_only(engine), expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(writes, reads)


async def stored(uow: UowFactory, session: Session) -> Session:
    async with uow() as u:
        await u.sessions.add(session)
        await u.commit()
    return session


async def read(uow: UowFactory, session_id: str) -> Session:
    async with uow().reading() as u:
        session = await u.sessions.get(SessionId(session_id))
    assert session is not None
    return session


def said(session: Session, text: str, role: Role = Role.USER) -> Message:
    message = MessageFactory(
        role=role,
        content=(TextBlock(text=text),),
        created_at=session.updated_at + timedelta(seconds=1),
    )
    session.add_message(message)
    return message


async def test_a_rename_elsewhere_survives_the_next_prompt(uow: UowFactory) -> None:
    """The lost update of issue 12: `iac-code sessions rename` while a server holds the
    session, then the server's next prompt wrote the old title back."""
    server = await stored(uow, SessionFactory(title=None))
    said(server, "Fix the login bug")
    await save(uow(), server)
    cli = await read(uow, server.id)
    cli.rename("Login work", at=T0 + timedelta(days=1))
    await save(uow(), cli)

    said(server, "And the logout one too")
    await save(uow(), server)

    assert (await read(uow, server.id)).title == "Login work"
    assert server.title == "Login work"  # the server's copy learnt it from the write


async def test_a_title_from_the_first_prompt_yields_to_a_rename_made_before_it(
    uow: UowFactory,
) -> None:
    server = await stored(uow, SessionFactory(title=None))
    cli = await read(uow, server.id)
    cli.rename("Named by hand", at=T0 + timedelta(days=1))
    await save(uow(), cli)

    said(server, "Fix the login bug")
    await save(uow(), server)

    assert (await read(uow, server.id)).title == "Named by hand"
    assert server.title == "Named by hand"


async def test_two_writers_of_a_setting_one_conflict(uow: UowFactory) -> None:
    session = await stored(uow, SessionFactory(mode_id="default"))
    first, second = await read(uow, session.id), await read(uow, session.id)
    first.set_mode("plan", at=T0 + timedelta(days=1))
    await save(uow(), first)
    second.set_mode("acceptEdits", at=T0 + timedelta(days=1))

    with pytest.raises(SessionConflict) as raised:
        await save(uow(), second)

    assert raised.value.details["sessionId"] == session.id
    assert (await read(uow, session.id)).mode_id == "plan"
    assert len(second.changes) == 1  # still recorded: nothing was written


async def test_two_appends_at_one_position_one_conflict(uow: UowFactory) -> None:
    session = await stored(uow, SessionFactory())
    here, there = await read(uow, session.id), await read(uow, session.id)
    kept = said(here, "written here")
    await save(uow(), here)
    said(there, "written on another replica")

    with pytest.raises(SessionConflict):
        await save(uow(), there)

    assert (await read(uow, session.id)).messages == (kept,)


async def test_a_setting_after_a_conflict_is_applied_to_the_stored_session(
    uow: UowFactory,
) -> None:
    session = await stored(uow, SessionFactory(mode_id="default"))
    stale = await read(uow, session.id)
    other = await read(uow, session.id)
    other.rename("Renamed elsewhere", at=T0 + timedelta(days=1))
    said(other, "a turn elsewhere")
    await save(uow(), other)

    await save_setting(uow(), stale, lambda s: s.set_mode("plan", at=T0 + timedelta(days=2)))

    now = await read(uow, session.id)
    assert (now.mode_id, now.title, len(now.messages)) == ("plan", "Renamed elsewhere", 1)
    assert (stale.title, stale.messages, stale.version) == (now.title, now.messages, now.version)


async def test_every_write_moves_the_version_on(uow: UowFactory) -> None:
    session = await stored(uow, SessionFactory())
    versions = [session.version]
    said(session, "one")
    await save(uow(), session)
    versions.append(session.version)
    session.set_mode("plan", at=T0 + timedelta(days=1))
    await save(uow(), session)
    versions.append(session.version)
    assert (await read(uow, session.id)).version == session.version
    assert versions == sorted(set(versions))


async def test_changes_of_a_unit_not_committed_are_recorded_again(
    engine: AsyncEngine,
) -> None:
    uow = SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False))
    session = await stored(lambda: uow, SessionFactory())
    message = said(session, "lost with the transaction")
    async with uow as u:
        await u.sessions.save(session)  # no commit: rolled back
    assert len(session.changes) == 2 and session.version == 0

    await save(uow, session)
    assert (await read(lambda: uow, session.id)).messages == (message,)


async def test_a_title_learnt_by_a_write_not_committed_is_forgotten(
    engine: AsyncEngine,
) -> None:
    uow = SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False))
    server = await stored(lambda: uow, SessionFactory(title=None))
    cli = await read(lambda: uow, server.id)
    cli.rename("Login work", at=T0 + timedelta(days=1))
    await save(uow, cli)
    said(server, "Fix the login bug")
    async with uow as u:
        await u.sessions.save(server)
        assert (server.title, server.version) == ("Login work", 2)  # learnt from the write
        # no commit: rolled back
    assert (server.title, server.version) == ("Fix the login bug", 0)

    await save(uow, server)
    assert (server.title, server.version) == ("Login work", 2)
    assert (await read(lambda: uow, server.id)).title == "Login work"


async def test_a_copy_kept_in_memory_conflicts_and_takes_a_setting_on_the_stored_one(
    uow: UowFactory,
) -> None:
    """A load while the turn runs elsewhere repaired this copy in memory only: no stored
    version holds its history, so a setting is applied to the stored session instead."""
    session = await stored(uow, SessionFactory())
    first = said(session, "a")
    await save(uow(), session)
    repair = MessageFactory(reply=True, content=(TextBlock(text="interrupted"),))
    copy = (await read(uow, session.id)).with_history([first, repair])
    copy.keep_in_memory()
    copy.set_mode("plan", at=T0 + timedelta(days=1))

    with pytest.raises(SessionConflict):
        await save(uow(), copy)
    assert copy.version is None and len(copy.changes) == 1  # nothing was written

    await save_setting(uow(), copy, lambda s: s.set_mode("plan", at=T0 + timedelta(days=1)))
    now = await read(uow, session.id)
    assert (now.mode_id, now.messages) == ("plan", (first,))
    assert (copy.version, copy.messages) == (now.version, now.messages)


async def test_a_copy_kept_in_memory_does_not_rewrite_the_stored_history(
    uow: UowFactory,
) -> None:
    session = await stored(uow, SessionFactory())
    kept = said(session, "a")
    await save(uow(), session)
    repair = MessageFactory(content=(TextBlock(text="A, repaired"),))
    copy = (await read(uow, session.id)).with_history([repair])
    copy.keep_in_memory()
    with pytest.raises(SessionConflict):
        async with uow() as u:
            await u.sessions.rewrite_history(copy, 0)
            await u.commit()
    assert (await read(uow, session.id)).messages == (kept,)


async def test_reading_takes_no_write_lock(engine: AsyncEngine) -> None:
    """A list or load while a turn's write is open neither waits nor fails (SQLite's
    IMMEDIATE lock would make it wait out busy_timeout and fail)."""
    writes = async_sessionmaker(engine, expire_on_commit=False)
    uow = SqlAlchemyUnitOfWork(writes, async_sessionmaker(read_only(engine)))
    session = await stored(lambda: uow, SessionFactory())
    writer = SqlAlchemyUnitOfWork(writes)
    async with writer as w:
        said(session, "being written")
        await w.sessions.save(session)  # holds the write lock until the end of the block
        async with uow.reading() as r:
            page = await r.listing.list_page(cwd=None, after=None, limit=5)
            seen = await r.sessions.get(session.id)
        await w.commit()
    assert [s.session_id for s in page] == [session.id]
    assert seen is not None and seen.messages == ()  # the last commit, not the open write


async def test_appends_put_back_by_two_failed_units_are_written_in_order(
    engine: AsyncEngine,
) -> None:
    """A unit of work saved an append and rolled back while a second, saving the next
    append, waited for it: the second then conflicts. Both appends are recorded again,
    and the next save writes them, in their order (not the later one first, a conflict
    at every save from then on)."""
    writes = async_sessionmaker(engine, expire_on_commit=False)
    session = await stored(lambda: SqlAlchemyUnitOfWork(writes), SessionFactory())
    first = said(session, "first")
    failing = SqlAlchemyUnitOfWork(writes)
    async with failing as u:
        await u.sessions.save(session)  # holds the row (the write lock on SQLite)
        second = said(session, "second")
        waiting = asyncio.create_task(save(SqlAlchemyUnitOfWork(writes), session))
        # It took "second": it waits for the row (SQLite), or PostgreSQL, which sees the
        # count before this write, refuses it at once.
        await until(lambda: not session.changes or waiting.done())
        # no commit: rolled back, "first" recorded again
    with pytest.raises(SessionConflict):
        await waiting
    assert [c.message for c in session.changes if isinstance(c, MessageAdded)] == [
        first,
        second,
    ]
    await save(SqlAlchemyUnitOfWork(writes), session)
    assert (await read(lambda: SqlAlchemyUnitOfWork(writes), session.id)).messages == (
        first,
        second,
    )


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll `condition` until it holds (a deadline, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_a_setting_changed_while_the_turn_stores_a_message_waits_for_it(
    engine: AsyncEngine,
) -> None:
    """The client changes the mode while the turn's append is being written (in one
    process: the same session object). The setting is stored after the append, and
    neither is lost or reported as a conflict: PostgreSQL must not judge the setting's
    check against the version before the append's still open write."""
    writes = async_sessionmaker(engine, expire_on_commit=False)
    session = await stored(lambda: SqlAlchemyUnitOfWork(writes), SessionFactory())
    message = said(session, "being stored")
    async with SqlAlchemyUnitOfWork(writes) as turn:
        await turn.sessions.save(session)  # written, not yet committed
        mode = asyncio.create_task(
            save_setting(
                SqlAlchemyUnitOfWork(writes),
                session,
                lambda s: s.set_mode("plan", at=T0 + timedelta(minutes=1)),
            )
        )
        await until(lambda: session.mode_id == "plan")
        await waiting_for_a_lock(engine)  # the setting's write waits for the append's
        await turn.commit()
    await mode
    assert session.messages == (message,)
    back = await read(lambda: SqlAlchemyUnitOfWork(writes), session.id)
    assert (back.messages, back.mode_id) == ((message,), "plan")


async def waiting_for_a_lock(engine: AsyncEngine) -> None:
    """Until a statement of this database waits for a row lock (PostgreSQL). SQLite: a
    writer waits at BEGIN IMMEDIATE whenever it comes, so there is nothing to wait for."""
    if engine.dialect.name != "postgresql":
        return
    query = text(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE NOT l.granted AND a.datname = current_database()"
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while True:
        async with engine.connect() as db:
            if await db.scalar(query):
                return
        assert loop.time() < deadline, "no statement came to wait for the lock"
        await asyncio.sleep(0.01)
