"""What makes a session a sub-agent's: the session and tool call that started it."""

from dataclasses import dataclass

from domain.ids import SessionId, ToolCallId


@dataclass(frozen=True, slots=True, kw_only=True)
class Spawn:
    """A child session's origin. A child is read-only to clients: only its run writes it."""

    parent_id: SessionId
    tool_call_id: ToolCallId
    agent: str
