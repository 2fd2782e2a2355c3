"""Storing a setting of a session another writer may have changed meanwhile.

One open session has writers in this process that run at once: its turn stores each
message as it completes, while a client (this replica's, or another's routed here) changes
a setting or the title. A write reads the version it checks before it has the row, and a
failed one puts its changes and that version back: two interleaved writes of one copy
would take each other for a change made elsewhere (and the turn, which does not retry its
appends, would fail). So the writes of one session take turns here, in this process."""

import asyncio
from collections.abc import Callable
from typing import TypeVar
from weakref import WeakKeyDictionary

from application.errors import SessionConflict, SessionNotFound
from application.ports.unit_of_work import UnitOfWork
from domain.session import Session

T = TypeVar("T")

# Per session (equal by id: every copy of one session in this process shares its lock).
_writing: "WeakKeyDictionary[Session, asyncio.Lock]" = WeakKeyDictionary()


def _lock_of(session: Session) -> asyncio.Lock:
    lock = _writing.get(session)
    if lock is None:
        lock = _writing[session] = asyncio.Lock()
    return lock


async def save(uow: UnitOfWork, session: Session) -> None:
    """Write what the session recorded, in one transaction (none if nothing was)."""
    async with _lock_of(session):
        await _write(uow, session)


async def _write(uow: UnitOfWork, session: Session) -> None:
    if not session.changes:
        return
    async with uow as work:
        await work.sessions.save(session)
        await work.commit()


async def save_setting(uow: UnitOfWork, session: Session, change: Callable[[Session], T]) -> T:
    """Apply `change` to the session and store it. If another process changed the session
    since it was read here (a rename from the CLI, a turn on another replica), the stored
    session is taken and `change` applied to it once more: the last writer wins, knowingly,
    and nothing else the other wrote is undone. A second conflict is reported.

    The whole of it is one write of the session here: a turn storing a message meanwhile
    waits, and neither its write nor the stored copy read for a retry is half-way."""
    async with _lock_of(session):
        result = change(session)
        try:
            await _write(uow, session)
        except SessionConflict:
            async with uow.reading() as reader:
                stored = await reader.sessions.get(session.id)
            if stored is None:
                raise SessionNotFound(
                    f"Session {session.id!r} was deleted elsewhere.", sessionId=session.id
                ) from None
            session.read_again(stored)
            result = change(session)
            await _write(uow, session)
        return result
