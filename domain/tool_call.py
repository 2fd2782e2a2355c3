from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from domain.errors import InvalidTransition
from domain.ids import ToolCallId


class ToolCallStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"  # ours only: on the ACP wire a cancelled call is shown as failed

    @property
    def is_final(self) -> bool:
        return self in (ToolCallStatus.COMPLETED, ToolCallStatus.FAILED, ToolCallStatus.CANCELLED)


_ALLOWED = {
    ToolCallStatus.PENDING: {
        ToolCallStatus.IN_PROGRESS,
        ToolCallStatus.FAILED,
        ToolCallStatus.CANCELLED,
    },
    ToolCallStatus.IN_PROGRESS: {
        ToolCallStatus.COMPLETED,
        ToolCallStatus.FAILED,
        ToolCallStatus.CANCELLED,
    },
}


class ToolKind(StrEnum):
    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    SWITCH_MODE = "switch_mode"
    OTHER = "other"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool invocation requested by the model; status only moves forward."""

    id: ToolCallId
    name: str
    input: Mapping[str, object] = field(default_factory=dict)
    status: ToolCallStatus = ToolCallStatus.PENDING

    def advance(self, status: ToolCallStatus) -> "ToolCall":
        if status not in _ALLOWED.get(self.status, set()):
            raise InvalidTransition(
                f"tool call {self.id} cannot go from {self.status} to {status}",
                tool_call_id=self.id,
                current=str(self.status),
                requested=str(status),
            )
        return replace(self, status=status)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextOutput:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOutput:
    path: str
    old_text: str | None  # None for a new file
    new_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalOutput:
    """A terminal the editor runs and shows live. Once released it can no longer be shown:
    `text`, the command's output, is what a later replay shows instead."""

    terminal_id: str
    text: str = ""


ToolOutput = TextOutput | DiffOutput | TerminalOutput


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRecord:
    """A finished tool call as the user saw it: enough to show it again on load."""

    id: ToolCallId
    name: str
    title: str
    kind: ToolKind
    arguments: Mapping[str, object]
    status: ToolCallStatus
    locations: tuple[str, ...] = ()
    output: tuple[ToolOutput, ...] = ()
    raw_output: Mapping[str, object] | None = None
