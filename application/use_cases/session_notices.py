"""Telling a session's users something outside any model reply (a background task ended,
say), turn or no turn."""

from enum import StrEnum

from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from domain.events import Notice
from domain.ids import SessionId


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class SessionNotices:
    """The one seam through which the agent tells a session's clients about an event.

    Today it is agent text (`agent_message_chunk`), shown but never stored nor sent to the
    model. Where a client advertises `clientCapabilities.session.notices` (issue 27), this is
    where it becomes a `notice` update instead."""

    def __init__(self, *, sink: EventSink, ids: IdGenerator) -> None:
        self._sink = sink
        self._ids = ids

    async def tell_session(
        self, session_id: str, severity: Severity, title: str, description: str
    ) -> None:
        text = f"{title}\n{description}" if description else title
        if severity is not Severity.INFO:
            text = f"[{severity.value}] {text}"
        notice = Notice(message_id=self._ids.message_id(), text=text)
        await self._sink.emit(SessionId(session_id), notice)
