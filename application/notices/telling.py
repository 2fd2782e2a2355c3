"""Telling a session's clients something that is not the model's output (a queue shown
beside a running turn, a queue a dead process dropped)."""

from application.notices.session_notices import SessionNotices, Severity

__all__ = ["Severity", "TellSession"]


class TellSession(SessionNotices):
    """`SessionNotices.tell_session` as a callable use case: an ACP `notice` to a client
    that advertised notices, the same words as agent text to any other."""

    async def __call__(
        self, session_id: str, severity: Severity, title: str, description: str
    ) -> None:
        await self.tell_session(session_id, severity, title, description)
