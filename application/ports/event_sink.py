from abc import abstractmethod
from typing import Protocol

from domain.events import AgentEvent
from domain.ids import SessionId


class EventSink(Protocol):
    """Delivers agent events to the client, in order. Returns once the event is handed over."""

    @abstractmethod
    async def emit(self, session_id: SessionId, event: AgentEvent) -> None: ...
