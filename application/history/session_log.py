from datetime import datetime

from application.history.saving import save
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from domain.content import UserInputBlock
from domain.events import SessionTitleChanged
from domain.ids import MessageId
from domain.message import Message, MessageKind, Role
from domain.session import Session
from domain.turn import Turn


class SessionLog:
    """Stores a session's messages and turns as they complete, each in its own short
    transaction, and tells the client when a message gave the session its title."""

    def __init__(self, *, uow: UnitOfWork, sink: EventSink) -> None:
        self._uow = uow
        self._sink = sink

    async def append(self, session: Session, message: Message) -> None:
        titled = session.add_message(message)
        await save(self._uow, session)
        if titled and session.title:
            await self._sink.emit(session.id, SessionTitleChanged(title=session.title))

    async def append_prompt(
        self,
        session: Session,
        message_id: MessageId,
        content: tuple[UserInputBlock, ...],
        *,
        at: datetime,
        kind: MessageKind = MessageKind.CHAT,
        typed: str | None = None,
        context: str | None = None,
    ) -> None:
        """Store what the user sent, as a prompt or (COMMAND) a slash command; `typed`:
        the user's own words when `content` is what they expanded into."""
        message = Message(
            id=message_id,
            role=Role.USER,
            content=content,
            created_at=at,
            kind=kind,
            typed=typed,
            context=context,
        )
        await self.append(session, message)

    async def record(self, session: Session, turn: Turn, error: str | None) -> None:
        async with self._uow as uow:
            await uow.activity.record_turn(session.id, turn, error)
            await uow.commit()
