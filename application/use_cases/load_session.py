from dataclasses import dataclass

from application.dto import SessionState
from application.errors import SessionNotFound
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from application.use_cases.session_state import state_of
from domain.config import Catalog
from domain.events import AgentEvent, TextDelta, ThinkingDelta, UserContentReplayed
from domain.message import Message, Role
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadSessionRequest:
    session_id: str
    cwd: str


def replay_events(message: Message) -> list[AgentEvent]:
    """The updates that show a stored message again, as the live turn showed it."""
    if message.role is Role.USER:
        if message.is_tool_results_only:
            return []
        return [UserContentReplayed(message_id=message.id, block=b) for b in message.content]
    events: list[AgentEvent] = []
    if thinking := message.thinking_text():
        events.append(ThinkingDelta(message_id=message.id, text=thinking))
    if text := message.visible_text():
        events.append(TextDelta(message_id=message.id, text=text))
    return events


class LoadSession:
    """Open a stored session and replay its whole history to the client before answering.

    - Raises SessionNotFound for an unknown id, or when it lives in another cwd (the
      error says where).
    - Loading a session that is already open replays it again without a second runtime.
    """

    def __init__(
        self, *, uow: UnitOfWork, registry: SessionRegistry, sink: EventSink, catalog: Catalog
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._sink = sink
        self._catalog = catalog

    async def execute(self, request: LoadSessionRequest) -> SessionState:
        active = self._registry.find(request.session_id)
        session = active.session if active else await self._fetch(request.session_id)
        if session.cwd != request.cwd:
            raise SessionNotFound(
                f"Session {request.session_id!r} belongs to {session.cwd!r}, not {request.cwd!r}.",
                sessionId=request.session_id,
                cwd=session.cwd,
            )
        for message in session.messages:
            for event in replay_events(message):
                await self._sink.emit(session.id, event)
        self._registry.open(session)
        return state_of(session, self._catalog)

    async def _fetch(self, session_id: str) -> Session:
        async with self._uow as uow:
            session = await uow.sessions.get(session_id)  # type: ignore[arg-type]
        if session is None:
            raise SessionNotFound(
                f"No session with id {session_id!r} exists.", sessionId=session_id
            )
        return session
