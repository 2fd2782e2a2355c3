"""A sub-agent run stored as a session of its own, written as it goes: its task, each of
its model's replies and tool results, each finished tool call. A crash keeps what it had
completed; `session/load` of the child id shows it again like any session."""

from collections.abc import Callable

from application.ports.unit_of_work import UnitOfWork
from domain.ids import SessionId
from domain.message import Message
from domain.session import Session
from domain.tool_call import ToolCallRecord


class ChildSessions:
    """Each write is a unit of work of its own, committed at once: the child's session is
    written only by its run, so nothing else can conflict with it. A fresh unit of work
    each time: several children write at once."""

    def __init__(self, *, uow: Callable[[], UnitOfWork]) -> None:
        self._uow = uow

    async def opened(self, child: Session) -> None:
        async with self._uow() as uow:
            await uow.sessions.add(child)
            await uow.commit()

    async def added(self, child: Session, message: Message) -> None:
        child.add_message(message)
        async with self._uow() as uow:
            await uow.sessions.save(child)
            await uow.commit()

    async def tool_call(self, child_id: SessionId, record: ToolCallRecord) -> None:
        async with self._uow() as uow:
            await uow.activity.record_tool_call(child_id, record)
            await uow.commit()
