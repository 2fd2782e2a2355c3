from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from domain.events import SessionTitleChanged
from domain.message import Message
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
        async with self._uow as uow:
            await uow.sessions.append_message(session, message)
            await uow.commit()
        if titled and session.title:
            await self._sink.emit(session.id, SessionTitleChanged(title=session.title))

    async def record(self, session: Session, turn: Turn, error: str | None) -> None:
        async with self._uow as uow:
            await uow.sessions.record_turn(session.id, turn, error)
            await uow.commit()
