"""Telling a session's clients something that is not the model's output."""

from enum import StrEnum

from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from domain.events import Notice
from domain.ids import SessionId


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"


class TellSession:
    """The one seam for a notice to the user about the session (a queue shown or dropped).

    Today it is agent text every client shows (`agent_message_chunk`, not stored, never
    sent to the model). Where the client advertises `clientCapabilities.session.notices`,
    this is the place to send a `notice` update instead."""

    def __init__(self, *, sink: EventSink, ids: IdGenerator) -> None:
        self._sink = sink
        self._ids = ids

    async def __call__(
        self, session_id: str, severity: Severity, title: str, description: str
    ) -> None:
        text = (
            f"\n\n[{title}] {description}"
            if severity is Severity.INFO
            else (f"\n\n[{severity.value}: {title}] {description}")
        )
        notice = Notice(message_id=self._ids.message_id(), text=text)
        await self._sink.emit(SessionId(session_id), notice)
