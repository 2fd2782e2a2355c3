from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from domain.ids import ToolCallId
from domain.tools import Category, ToolSpec


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

    @property
    def label(self) -> str:
        return {
            PermissionOption.ALLOW_ONCE: "Allow once",
            PermissionOption.ALLOW_ALWAYS: "Always allow this tool in this session",
            PermissionOption.REJECT_ONCE: "Reject",
            PermissionOption.REJECT_ALWAYS: "Always reject this tool in this session",
        }[self]


class Decider(StrEnum):
    USER = "user"
    SESSION_RULE = "session-rule"
    POLICY = "policy"  # auto-allowed reads inside the working directory
    TIMEOUT = "timeout"
    CLIENT_ERROR = "client-error"


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecision:
    tool_call_id: ToolCallId
    tool_name: str
    arguments: dict[str, object]
    option: PermissionOption | None  # None: cancelled, timed out or unanswerable
    decided_by: Decider
    decided_at: datetime

    @property
    def allowed(self) -> bool:
        return self.option is not None and self.option.allows


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    REJECT = "reject"


@dataclass(slots=True)
class PermissionRules:
    """What a user decided "always" for a tool, for the rest of the session."""

    remembered: dict[str, bool] = field(default_factory=dict)

    def verdict(self, spec: ToolSpec, *, outside_cwd: bool) -> Verdict:
        """Remembered answers hold for the tool, except that "always allow" never reaches
        outside the working directory: leaving it is asked about each time."""
        remembered = self.remembered.get(spec.name)
        if remembered is False:
            return Verdict.REJECT
        if outside_cwd:
            return Verdict.ASK
        if remembered or spec.category is Category.READ:
            return Verdict.ALLOW
        return Verdict.ASK

    def learn(self, decision: PermissionDecision) -> None:
        if decision.option is not None and decision.option.remembered:
            self.remembered[decision.tool_name] = decision.option.allows
