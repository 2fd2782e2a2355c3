"""Rewind: take a session's history back to just before one of the user's prompts, and
undo the last rewind while nothing new was prompted.

The cut is stored as a new version of the session (`rewrite_history`), so a load, on any
process, shows it. What was cut is kept in memory with the open session for the undo: an
undo is offered only by the process that rewound, until the session is prompted again,
rewound again or closed."""

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from application.errors import RewindNotUndoable
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime import ActiveSession, RewindUndo, SessionRegistry, TurnControl
from application.use_cases.load_session import replay_events
from application.use_cases.saving import save
from domain.events import SessionRewound
from domain.ids import MessageId
from domain.message import Message
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewound:
    """The history's length after the rewind, and the token that undoes it."""

    message_count: int
    undo_token: str


class RewindSession:
    """Cut an open, idle session's history back to just before the prompt `to_message_id`.
    Every attached client is told (`SessionRewound`); the undo token is in the answer."""

    def __init__(self, *, uow: UnitOfWork, registry: SessionRegistry, sink: EventSink) -> None:
        self._uow = uow
        self._registry = registry
        self._sink = sink

    async def execute(
        self, session_id: str, to_message_id: str, *, hold: TurnControl | None = None
    ) -> Rewound:
        """`hold`: the turn that follows at once (an edited prompt's); the session stays
        busy for it, its caller ends it."""
        active = self._registry.require(session_id)
        session = active.session
        position = session.prompt_position(to_message_id)
        control = active.begin_turn(hold)  # busy while a turn runs; no prompt starts meanwhile
        try:
            await save(self._uow, session)  # what was recorded lands before the cut
            cut = session.cut_at(position)
            await self._rewrite(session, position, undo=lambda: session.put_back(cut))
        finally:
            if hold is None:
                active.end_turn(control)
        undo = RewindUndo(
            token=secrets.token_urlsafe(12),
            position=position,
            to_message_id=to_message_id,
            messages=cut,
        )
        active.rewind_undo = undo
        await self._sink.emit(
            session.id,
            SessionRewound(to_message_id=MessageId(to_message_id), message_count=position),
        )
        return Rewound(message_count=position, undo_token=undo.token)

    async def undo(self, session_id: str, token: str) -> int:
        """Bring back what the last rewind cut (its history's length after). Refused once
        anything was prompted since, or for another token."""
        active = self._registry.require(session_id)
        undo = _undoable(active, token)
        session = active.session
        control = active.begin_turn()
        try:
            session.put_back(undo.messages)
            await self._rewrite(session, undo.position, undo=lambda: session.cut_at(undo.position))
        finally:
            active.end_turn(control)
        active.rewind_undo = None
        await self._sink.emit(
            session.id,
            SessionRewound(
                to_message_id=MessageId(undo.to_message_id),
                message_count=session.message_count,
                undone=True,
            ),
        )
        await self._replay(session, undo.messages)
        return session.message_count

    async def _rewrite(self, session: Session, start: int, *, undo: Callable[[], object]) -> None:
        """Store the history from `start` on; on failure the copy in memory is put back."""
        try:
            async with self._uow as uow:
                await uow.sessions.rewrite_history(session, start)
                await uow.commit()
        except BaseException:
            undo()
            raise

    async def _replay(self, session: Session, messages: tuple[Message, ...]) -> None:
        """The messages that came back, shown as a load shows them."""
        async with self._uow.reading() as uow:
            records = await uow.activity.tool_calls(session.id)
        for event in replay_events(messages, records):
            await self._sink.emit(session.id, event)


def _undoable(active: ActiveSession, token: str) -> RewindUndo:
    undo = active.rewind_undo
    session = active.session
    if undo is None or undo.token != token:
        raise RewindNotUndoable(
            f"Session {session.id!r} has no rewind to undo with this token.",
            sessionId=session.id,
            undoToken=token,
        )
    if session.message_count != undo.position:
        active.rewind_undo = None
        raise RewindNotUndoable(
            f"Session {session.id!r} was prompted since the rewind: it can no longer be undone.",
            sessionId=session.id,
            undoToken=token,
        )
    return undo
