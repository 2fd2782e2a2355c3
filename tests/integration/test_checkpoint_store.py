"""The file checkpoint store's contract, on SQLite, PostgreSQL and the in-memory fake the
use-case tests use: what is kept, deduplicated, dropped; and kept across processes."""

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.persistence import tables
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.ports.checkpoints import StoredUndo
from application.ports.unit_of_work import UnitOfWork
from domain.checkpoints import ABSENT, FileCheckpoint, Unrestorable, state_of
from domain.content import TextBlock
from domain.ids import MessageId
from domain.message import Message, Role
from domain.restore import UndoFile
from domain.session import Session
from tests.factories import SessionFactory
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.unit_of_work import FakeUnitOfWork, InMemoryCheckpoints

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]

UowFactory = Callable[[], UnitOfWork]
LONG_PATH = "/p/" + "deep/" * 1000 + "file.txt"  # over what a btree entry holds


@pytest.fixture
def uow(backend: str, engine) -> UowFactory:  # type: ignore[no-untyped-def]
    if backend == "memory":
        shared, kept = InMemorySessionRepository(), InMemoryCheckpoints()
        return lambda: FakeUnitOfWork(shared, checkpoints=kept)
    factory = async_sessionmaker(engine, expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(factory)


async def stored_session(uow: UowFactory) -> Session:
    session = SessionFactory()
    async with uow() as u:
        await u.sessions.add(session)
        await u.commit()
    return session


def checkpoint(message_id: str, path: str, content: bytes | None) -> FileCheckpoint:
    return FileCheckpoint(message_id=message_id, path=path, prior=state_of(content))


async def add(uow: UowFactory, sid: str, kept: FileCheckpoint, content: bytes | None) -> None:
    async with uow() as u:
        await u.checkpoints.add(sid, kept, content)
        await u.commit()


async def test_checkpoints_are_kept_in_order_with_their_content(uow: UowFactory) -> None:
    session = await stored_session(uow)
    await add(uow, session.id, checkpoint("u1", "/p/a", b"\xffbytes\r\n"), b"\xffbytes\r\n")
    await add(uow, session.id, checkpoint("u1", LONG_PATH, None), None)
    async with uow() as u:
        await u.checkpoints.written(session.id, "u1", LONG_PATH, state_of(b"new"))
        await u.commit()
    async with uow() as u:
        first, second = await u.checkpoints.checkpoints(session.id)
        assert (first.path, first.prior, first.after) == ("/p/a", state_of(b"\xffbytes\r\n"), None)
        assert (second.path, second.prior, second.after) == (LONG_PATH, ABSENT, state_of(b"new"))
        assert first.seq < second.seq
        assert await u.checkpoints.has(session.id, "u1", LONG_PATH)
        assert not await u.checkpoints.has(session.id, "u2", LONG_PATH)
        assert await u.checkpoints.content(session.id, first.prior) == b"\xffbytes\r\n"


async def test_a_content_is_stored_once_and_freed_when_its_last_checkpoint_is_dropped(
    uow: UowFactory,
) -> None:
    session = await stored_session(uow)
    await add(uow, session.id, checkpoint("u1", "/p/a", b"same"), b"same")
    await add(uow, session.id, checkpoint("u2", "/p/b", b"same"), b"same")
    async with uow() as u:
        assert await u.checkpoints.stored_bytes(session.id) == 4
        first, second = await u.checkpoints.checkpoints(session.id)
        await u.checkpoints.drop(session.id, first.seq)
        await u.commit()
    async with uow() as u:
        assert await u.checkpoints.content(session.id, state_of(b"same")) == b"same"
        await u.checkpoints.drop(session.id, second.seq)
        await u.commit()
    async with uow() as u:
        assert await u.checkpoints.stored_bytes(session.id) == 0
        assert await u.checkpoints.content(session.id, state_of(b"same")) is None
        kept = await u.checkpoints.checkpoints(session.id)
        assert [c.unrestorable for c in kept] == [Unrestorable.DROPPED] * 2


async def test_an_unrestorable_checkpoint_keeps_no_content(uow: UowFactory) -> None:
    session = await stored_session(uow)
    binary = FileCheckpoint(
        message_id="u1", path="/p/b", prior=state_of(b"\0"), unrestorable=Unrestorable.BINARY
    )
    await add(uow, session.id, binary, None)
    async with uow() as u:
        (kept,) = await u.checkpoints.checkpoints(session.id)
        assert kept.unrestorable is Unrestorable.BINARY
        assert await u.checkpoints.stored_bytes(session.id) == 0


async def test_a_rewind_undo_is_kept_as_it_was_replaced_and_dropped(uow: UowFactory) -> None:
    session = await stored_session(uow)
    cut = (
        Message(
            id=MessageId("u2"),
            role=Role.USER,
            content=(TextBlock(text="two \u00e9"),),
            created_at=datetime(2026, 12, 5, 7, 0, tzinfo=UTC),
        ),
        Message(
            id=MessageId("a2"),
            role=Role.ASSISTANT,
            content=(TextBlock(text="re: two"),),
            created_at=datetime(2026, 12, 5, 7, 1, tzinfo=UTC),
            interrupted=True,
        ),
    )
    files = (
        UndoFile(path=LONG_PATH, content=b"\xff\r\n", left=state_of(b"before")),
        UndoFile(path="/p/new", content=None, left=state_of(b"made")),
    )
    first = StoredUndo("t1", 2, "u2", cut, files)
    async with uow() as u:
        assert await u.checkpoints.undo(session.id) is None
        await u.checkpoints.keep_undo(session.id, first)
        await u.commit()
    async with uow() as u:
        assert await u.checkpoints.undo(session.id) == first
    second = StoredUndo("t2", 0, "u1", cut[:1])
    async with uow() as u:
        await u.checkpoints.keep_undo(session.id, second)  # the next rewind replaces it
        await u.commit()
    async with uow() as u:
        assert await u.checkpoints.undo(session.id) == second
        await u.checkpoints.drop_undo(session.id)
        await u.commit()
    async with uow() as u:
        assert await u.checkpoints.undo(session.id) is None


@pytest.mark.backends("sqlite", "postgres")
async def test_an_undo_stored_before_the_restores_states_were_kept_reads_them_as_unknown(
    uow: UowFactory,
    engine,  # type: ignore[no-untyped-def]
) -> None:
    """Its files were `[path, base64]`: no `left`, so any change since is a conflict."""
    session = await stored_session(uow)
    async with engine.begin() as connection:
        await connection.execute(
            tables.rewind_undos.insert().values(
                session_id=session.id,
                token="t",
                position=0,
                to_message_id="u1",
                messages=[],
                files=[["/p/a", "YQ=="], ["/p/b", None]],
            )
        )
    async with uow() as u:
        undo = await u.checkpoints.undo(session.id)
    assert undo is not None and undo.files == (
        UndoFile(path="/p/a", content=b"a", left=None),
        UndoFile(path="/p/b", content=None, left=None),
    )
