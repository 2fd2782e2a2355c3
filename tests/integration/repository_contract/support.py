"""Storing, appending and loading through the repository contract's unit of work."""

from collections.abc import Callable
from datetime import datetime, timedelta

from application.ports.unit_of_work import UnitOfWork
from domain.content import TextBlock
from domain.ids import SessionId, ToolCallId
from domain.message import Message
from domain.session import Session
from domain.stop_reason import StopReason
from domain.tool_call import ToolCallRecord, ToolCallStatus, ToolKind
from domain.turn import Turn
from domain.usage import Usage
from tests.factories import MessageFactory, SessionFactory

UowFactory = Callable[[], UnitOfWork]


async def store(uow: UowFactory, session: Session) -> Session:
    async with uow() as u:
        await u.sessions.add(session)
        await u.commit()
    return session


async def append(uow: UowFactory, session: Session, text: str) -> Message:
    message = MessageFactory(
        content=(TextBlock(text=text),), created_at=session.updated_at + timedelta(seconds=1)
    )
    session.add_message(message)
    async with uow() as u:
        await u.sessions.save(session)
        await u.commit()
    return message


async def load(uow: UowFactory, session_id: str) -> Session | None:
    async with uow() as u:
        return await u.sessions.get(SessionId(session_id))


def texts(session: Session | None) -> list[str]:
    assert session is not None
    return [m.visible_text() for m in session.messages]


async def fork_of(uow: UowFactory, source: Session) -> Session:
    fork = SessionFactory(
        cwd=source.cwd,
        created_at=source.updated_at,
        messages=list(source.messages),
        title=source.title,
    )
    async with uow() as u:
        await u.sessions.fork(source, fork)
        await u.commit()
    return fork


def _call(call_id: str, title: str) -> ToolCallRecord:
    return ToolCallRecord(
        id=ToolCallId(call_id),
        name="bash",
        title=title,
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        status=ToolCallStatus.COMPLETED,
    )


def finished_turn(at: datetime, usage: Usage, cost: float | None, reason: StopReason) -> Turn:
    turn = Turn(started_at=at, max_requests=5)
    turn.record_request(usage, cost)
    turn.finish(reason, at=at + timedelta(seconds=2))
    return turn
