"""The collaborators a prompt turn's pieces share, grouped as they always travel."""

from dataclasses import dataclass

from application.agent_loop.model_request import RequestBuilder
from application.compaction.context_meter import ContextMeter
from application.history.session_log import SessionLog
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient
from domain.events import Notice
from domain.ids import SessionId


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSide:
    """The model a turn asks: its client, the request it is sent, and the meter that
    prices each request and sizes the context against the model's window."""

    llm: LLMClient
    requests: RequestBuilder
    meter: ContextMeter


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOutput:
    """Where a turn's output goes: shown to the session's clients (sink) and stored (log),
    each message with a new id and the time it completed."""

    log: SessionLog
    sink: EventSink
    clock: Clock
    ids: IdGenerator

    async def tell(self, session_id: SessionId, text: str) -> None:
        """A notice for the user: shown, not stored, never sent to the model."""
        await self.sink.emit(session_id, Notice(message_id=self.ids.message_id(), text=text))
