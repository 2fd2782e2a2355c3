from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from domain.ids import ToolCallId


class PermissionOption(StrEnum):
    """The four answers a user can give; each option id equals its ACP kind."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"

    @property
    def allows(self) -> bool:
        return self in (PermissionOption.ALLOW_ONCE, PermissionOption.ALLOW_ALWAYS)

    @property
    def remembered(self) -> bool:
        return self in (PermissionOption.ALLOW_ALWAYS, PermissionOption.REJECT_ALWAYS)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecision:
    tool_call_id: ToolCallId
    tool_name: str
    option: PermissionOption | None  # None: the request was cancelled or went unanswered
    decided_by: str  # "user", "session-rule" or "timeout"
    decided_at: datetime

    @property
    def allowed(self) -> bool:
        return self.option is not None and self.option.allows
