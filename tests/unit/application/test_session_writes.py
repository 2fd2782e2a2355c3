"""Two writers of one open session in one process: its turn storing messages and a setting
changed meanwhile (a mode set by this replica's client, or routed here from another
replica's, issue 32). Neither may see the other as a change made elsewhere."""

import asyncio
from datetime import UTC, datetime

from application.history.session_log import SessionLog
from application.sessions.settings import ChangeSettings
from domain.content import TextBlock
from domain.ids import MessageId, SessionId
from domain.message import Message, Role
from domain.session import Session
from tests.factories import SessionFactory
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.time_and_ids import FixedClock
from tests.fakes.turn import RecordingSink
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.unit.application.world import CATALOG

AT = datetime(2026, 1, 1, tzinfo=UTC)


class RowLockingStore(InMemorySessionRepository):
    """Writes as the database does: a write reads the version to check from its copy, then
    waits for the row's lock, held by a write not yet committed; it checks the row once it
    has the lock, and a failed write puts the copy's version back as it found it. The next
    write (`pause_write`) or read (`pause_read`) can be held at its start until let go."""

    def __init__(self) -> None:
        super().__init__()
        self._row = asyncio.Lock()
        self._write_gate: asyncio.Event | None = None
        self._read_gate: asyncio.Event | None = None
        self.write_paused = asyncio.Event()
        self.reads = 0

    def pause_write(self) -> asyncio.Event:
        self._write_gate = asyncio.Event()
        return self._write_gate

    def pause_read(self) -> asyncio.Event:
        self._read_gate = asyncio.Event()
        return self._read_gate

    async def save(self, session: Session) -> None:
        taken = session.take_changes()  # with the version the write's check is built from
        if not taken.changes:
            return
        async with self._row:
            if (gate := self._write_gate) is not None:
                self._write_gate = None
                self.write_paused.set()
                await gate.wait()
            self.write(session, taken)  # a conflict puts the changes and that version back

    async def get(self, session_id: SessionId) -> Session | None:
        self.reads += 1
        if (gate := self._read_gate) is not None:
            self._read_gate = None
            await gate.wait()
        return await super().get(session_id)


def message(n: int, role: Role = Role.ASSISTANT) -> Message:
    return Message(
        id=MessageId(f"m{n}"), role=role, content=(TextBlock(text=f"part {n}"),), created_at=AT
    )


async def settle() -> None:
    """Let every task that can run go as far as it can (no I/O here: nothing else waits)."""
    for _ in range(50):
        await asyncio.sleep(0)


async def test_a_mode_set_while_the_turn_stores_a_message_leaves_the_turn_storing() -> None:
    store = RowLockingStore()
    uow = FakeUnitOfWork(sessions=store)
    session = SessionFactory(id=SessionId("s1"), cwd="/work", created_at=AT, model="m1")
    await store.add(session)
    log = SessionLog(uow=uow, sink=RecordingSink())
    settings = ChangeSettings(uow=uow, sink=RecordingSink(), clock=FixedClock(), catalog=CATALOG)
    await log.append(session, message(0, Role.USER))

    # The turn stores its reply; its write holds the row while the mode is set.
    let_write_go = store.pause_write()
    reply = asyncio.ensure_future(log.append(session, message(1)))
    await store.write_paused.wait()
    mode = asyncio.ensure_future(settings.mode(session, "accept_edits"))
    await settle()
    let_read_go = store.pause_read()  # a re-read of the session, if any, takes a while
    let_write_go.set()
    await reply
    await settle()
    # The turn's next message (its tool's result) comes while the mode is being stored.
    result = asyncio.ensure_future(log.append(session, message(2, Role.USER)))
    await settle()
    let_read_go.set()
    await mode
    await result  # the turn's write is not taken for one made elsewhere

    stored = store.stored[session.id]
    assert [m.id for m in stored.messages] == ["m0", "m1", "m2"]
    assert stored.settings["mode_id"] == "accept_edits"
    assert (session.mode_id, session.version) == ("accept_edits", stored.version)
    assert session.changes == ()
    assert store.reads == 0  # nobody took the other for a writer elsewhere and read again
