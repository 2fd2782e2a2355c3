"""Storing a setting of a session another writer may have changed meanwhile."""

from collections.abc import Callable
from typing import TypeVar

from application.errors import SessionConflict, SessionNotFound
from application.ports.unit_of_work import UnitOfWork
from domain.session import Session

T = TypeVar("T")


async def save(uow: UnitOfWork, session: Session) -> None:
    """Write what the session recorded, in one transaction (none if nothing was)."""
    if not session.changes:
        return
    async with uow as work:
        await work.sessions.save(session)
        await work.commit()


async def save_setting(uow: UnitOfWork, session: Session, change: Callable[[Session], T]) -> T:
    """Apply `change` to the session and store it. If another process changed the session
    since it was read here (a rename from the CLI, a turn on another replica), the stored
    session is taken and `change` applied to it once more: the last writer wins, knowingly,
    and nothing else the other wrote is undone. A second conflict is reported."""
    result = change(session)
    try:
        await save(uow, session)
    except SessionConflict:
        async with uow.reading() as reader:
            stored = await reader.sessions.get(session.id)
        if stored is None:
            raise SessionNotFound(
                f"Session {session.id!r} was deleted elsewhere.", sessionId=session.id
            ) from None
        session.adopt(stored)
        result = change(session)
        await save(uow, session)
    return result
