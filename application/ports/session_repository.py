from abc import abstractmethod
from typing import Protocol

from domain.ids import SessionId
from domain.message import Message
from domain.permission import PermissionDecision
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.turn import Turn


class SessionRepository(Protocol):
    """Stores sessions as a row each plus one row per message, so appends cost the same at any
    history length. Changes become visible to others only after UnitOfWork.commit()."""

    @abstractmethod
    async def get(self, session_id: SessionId) -> Session | None:
        """The session with its whole message history, or None."""

    @abstractmethod
    async def add(self, session: Session) -> None:
        """Store a new session (and any messages it already has)."""

    @abstractmethod
    async def append_message(self, session: Session, message: Message) -> None:
        """Store `message`, already added to `session`, and the session's new updated_at/title."""

    @abstractmethod
    async def save_settings(self, session: Session) -> None:
        """Store the session's title, mode, model, config values and updated_at."""

    @abstractmethod
    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        """Store a finished (or failed) turn with its usage."""

    @abstractmethod
    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        """Store how a finished tool call was shown, for replay."""

    @abstractmethod
    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        """Store a permission decision; remembered ones come back as the session's rules."""
