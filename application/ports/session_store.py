from abc import abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.ids import SessionId
from domain.permission import PermissionDecision
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.turn import Turn
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """One stored turn: when, how it ended, what it used and cost (None: not priced)."""

    started_at: datetime
    finished_at: datetime | None
    stop_reason: str | None
    requests: int
    usage: Usage
    cost: float | None
    error: str | None


class SessionStore(Protocol):
    """Sessions as a row each plus one row per message, so appends cost the same at any
    history length. Changes become visible to others only after UnitOfWork.commit()."""

    @abstractmethod
    async def get(self, session_id: SessionId) -> Session | None:
        """The session with its whole message history, or None."""

    @abstractmethod
    async def add(self, session: Session) -> None:
        """Store a new session (and any messages it already has)."""

    @abstractmethod
    async def save(self, session: Session) -> None:
        """Write the changes the session recorded since it was read or last saved.

        Appends conflict only with other appends; a setting overwritten conflicts with any
        write since the session's version. Raises SessionConflict then (nothing is written,
        the changes stay recorded). On success the session holds the stored version, and
        the stored title (a rename elsewhere wins over a title taken from a prompt). If the
        unit of work is not committed, the changes are recorded again."""

    @abstractmethod
    async def fork(self, source: Session, fork: Session) -> None:
        """Store `fork`, a new session with `source`'s history and rules, independent from
        now on. Costs the same whatever the history's length."""

    @abstractmethod
    async def rewrite_history(self, session: Session, start: int) -> None:
        """Replace the stored messages from position `start` with `session.messages[start:]`
        (a persisted repair). Other sessions sharing the history are not affected."""

    @abstractmethod
    async def delete(self, session_id: SessionId, at: datetime) -> bool:
        """Remove the session and its history. False if there was no such session."""


class ActivityLog(Protocol):
    """What happened in a session's turns, besides its messages: append-only records."""

    @abstractmethod
    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        """Store a finished (or failed) turn with its usage."""

    @abstractmethod
    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        """Store how a finished tool call was shown, for replay."""

    @abstractmethod
    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        """Store a permission decision; remembered ones come back as the session's rules."""

    @abstractmethod
    async def turn_records(self, session_id: SessionId) -> list[TurnRecord]:
        """The session's own recorded turns (not a fork's source's), oldest first."""

    @abstractmethod
    async def tool_calls(self, session_id: SessionId) -> dict[str, ToolCallRecord]:
        """How each tool call of the session's history was shown, by tool call id."""
