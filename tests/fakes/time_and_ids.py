"""Clocks and id generators that tests control."""

import itertools
from datetime import UTC, datetime, timedelta

from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from domain.ids import MessageId, SessionId


class FixedClock(Clock):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current


class StoppedClock(Clock):
    """Time that moves only when told: leases lapse when a test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


class SequentialIds(IdGenerator):
    def __init__(self) -> None:
        self._sessions = itertools.count(1)
        self._messages = itertools.count(1)

    def session_id(self) -> SessionId:
        return SessionId(f"sess_{next(self._sessions)}")

    def message_id(self) -> MessageId:
        return MessageId(f"msg_{next(self._messages)}")
