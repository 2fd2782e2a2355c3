from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Literal

from domain.ids import ToolCallId
from domain.modes import ModeId
from domain.tools import Category, ToolSpec


class PermissionOption(StrEnum):
    """The answers a user can give. Each option id is its ACP kind, but for running a
    command once outside the sandbox: an `allow_once` of its own, offered only where the
    sandbox's ceiling allows `off` (never remembered, never implied by another answer)."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"
    ALLOW_ONCE_UNSANDBOXED = "allow_once_unsandboxed"

    @property
    def allows(self) -> bool:
        return self in (
            PermissionOption.ALLOW_ONCE,
            PermissionOption.ALLOW_ALWAYS,
            PermissionOption.ALLOW_ONCE_UNSANDBOXED,
        )

    @property
    def kind(self) -> "OptionKind":
        """ACP's `PermissionOptionKind` of this option."""
        return _KINDS[self]

    @property
    def remembered(self) -> bool:
        return self in (PermissionOption.ALLOW_ALWAYS, PermissionOption.REJECT_ALWAYS)

    @property
    def label(self) -> str:
        return {
            PermissionOption.ALLOW_ONCE: "Allow once",
            PermissionOption.ALLOW_ALWAYS: "Always allow in this project",
            PermissionOption.REJECT_ONCE: "Reject",
            PermissionOption.REJECT_ALWAYS: "Always reject this tool in this session",
            PermissionOption.ALLOW_ONCE_UNSANDBOXED: "Allow once, outside the sandbox",
        }[self]


OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
_KINDS: dict[PermissionOption, OptionKind] = {
    PermissionOption.ALLOW_ONCE: "allow_once",
    PermissionOption.ALLOW_ALWAYS: "allow_always",
    PermissionOption.REJECT_ONCE: "reject_once",
    PermissionOption.REJECT_ALWAYS: "reject_always",
    PermissionOption.ALLOW_ONCE_UNSANDBOXED: "allow_once",
}


class Decider(StrEnum):
    USER = "user"
    SESSION_RULE = "session-rule"  # "always reject" earlier in the session
    PROJECT_RULE = "project-rule"  # "always allow" remembered for the project
    MODE = "mode"  # allowed or refused by the session's mode
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
    REJECT = "reject"  # the user said "always reject" in this session
    REFUSE = "refuse"  # the mode forbids it (plan): refused without asking


PLAN_REFUSES = frozenset({Category.EDIT, Category.EXECUTE})


def decide(
    spec: ToolSpec,
    mode: str,
    *,
    always_asks: bool,
    rejected: bool = False,
    project_allows: bool = False,
) -> Verdict:
    """The one permission rule, for every mode.

    - The agent's own notes (its plan) touch nothing: they run in every mode, unasked; so
      do reading and stopping the session's own background tasks (starting one asked).
    - `plan` refuses edits and commands, whatever was remembered.
    - "Always reject" in the session wins over everything else.
    - A call that must always ask (outside the working directory, or a reason of its own)
      asks in every mode: no mode and no remembered rule reaches outside the project.
    - Reads run; `bypass` runs everything; `accept_edits` runs edits; a rule remembered
      for the project runs what it covers; the rest asks.
    """
    if spec.category in (Category.THINK, Category.TASKS):
        return Verdict.ALLOW
    if mode == ModeId.PLAN and spec.category in PLAN_REFUSES:
        return Verdict.REFUSE
    if rejected:
        return Verdict.REJECT
    if always_asks or spec.category is Category.SWITCH_MODE:
        return Verdict.ASK
    if spec.category is Category.READ or mode == ModeId.BYPASS:
        return Verdict.ALLOW
    if mode == ModeId.ACCEPT_EDITS and spec.category is Category.EDIT:
        return Verdict.ALLOW
    return Verdict.ALLOW if project_allows else Verdict.ASK


@dataclass(slots=True)
class PermissionRules:
    """The tools a user answered "always reject" for, for the rest of the session.

    "Always allow" is remembered for the project instead (domain.project_rules)."""

    rejected: set[str] = field(default_factory=set)

    def rejects(self, tool_name: str) -> bool:
        return tool_name in self.rejected

    def learn(self, decision: PermissionDecision) -> None:
        if decision.option is PermissionOption.REJECT_ALWAYS:
            self.rejected.add(decision.tool_name)
