"""The history side of a rewind: the cut (or the undo's put back) stored with the undo that
goes with it, the stored undo looked up, and the clients told of an undo."""

from collections.abc import Callable

from application.errors import RewindNotUndoable
from application.ports.checkpoints import StoredUndo
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.sessions.load_session import replay_events
from domain.events import SessionRewound
from domain.ids import MessageId
from domain.session import Session


class HistoryCut:
    def __init__(self, *, uow: UnitOfWork, sink: EventSink) -> None:
        self._uow = uow
        self._sink = sink

    async def store(
        self,
        session: Session,
        start: int,
        *,
        undo: Callable[[], object],
        keep: StoredUndo | None,
    ) -> None:
        """Store the history from `start` on, and with it the rewind's undo (`keep`; None:
        the undo is spent and forgotten); on failure the copy in memory is put back."""
        try:
            async with self._uow as uow:
                await uow.sessions.rewrite_history(session, start)
                if keep is None:
                    await uow.checkpoints.drop_undo(session.id)
                else:
                    await uow.checkpoints.keep_undo(session.id, keep)
                await uow.commit()
        except BaseException:
            undo()
            raise

    async def undoable(self, session: Session, token: str) -> StoredUndo:
        """The stored undo `token` names, while the history still ends where it cut."""
        async with self._uow.reading() as uow:
            undo = await uow.checkpoints.undo(session.id)
        if undo is None or undo.token != token:
            raise RewindNotUndoable(
                f"Session {session.id!r} has no rewind to undo with this token.",
                sessionId=session.id,
                undoToken=token,
            )
        if session.message_count != undo.position:
            async with self._uow as uow:
                await uow.checkpoints.drop_undo(session.id)
                await uow.commit()
            raise RewindNotUndoable(
                f"Session {session.id!r} was prompted since the rewind: it can no longer be "
                "undone.",
                sessionId=session.id,
                undoToken=token,
            )
        return undo

    async def told_undone(self, session: Session, undo: StoredUndo) -> None:
        """Every client is told, then shown the messages that came back as a load shows
        them."""
        await self._sink.emit(
            session.id,
            SessionRewound(
                to_message_id=MessageId(undo.to_message_id),
                message_count=session.message_count,
                undone=True,
            ),
        )
        async with self._uow.reading() as uow:
            records = await uow.activity.tool_calls(session.id)
        for event in replay_events(undo.messages, records):
            await self._sink.emit(session.id, event)
