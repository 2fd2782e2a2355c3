"""Telling a session's users something outside any model reply (a background task ended,
say), turn or no turn."""

from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from domain.events import Notice, NoticeSeverity, SessionNotice
from domain.ids import SessionId

Severity = NoticeSeverity  # the name this seam's callers use


class SessionNotices:
    """The one seam through which the agent tells a session's clients about an event: an
    ACP `notice` to a client that advertised `clientCapabilities.session.notices`, and to
    any other the agent text it got before notices (shown, never stored nor sent to the
    model)."""

    def __init__(self, *, sink: EventSink, ids: IdGenerator) -> None:
        self._sink = sink
        self._ids = ids

    async def tell_session(
        self, session_id: str, severity: NoticeSeverity, title: str, description: str
    ) -> None:
        text = f"{title}\n{description}" if description else title
        if severity is not NoticeSeverity.INFO:
            text = f"[{severity.value}] {text}"
        fallback = Notice(message_id=self._ids.message_id(), text=text)
        notice = SessionNotice(
            severity=severity, title=title, description=description or None, fallback=fallback
        )
        await self._sink.emit(SessionId(session_id), notice)
