from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from domain.ids import SessionId, ToolCallId
from domain.permission import PermissionOption
from domain.project_rules import ProjectRule
from domain.tool_call import ToolKind, ToolOutput


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequest:
    tool_call_id: ToolCallId
    tool_name: str
    title: str
    kind: ToolKind
    arguments: Mapping[str, object]
    locations: tuple[str, ...]
    preview: tuple[ToolOutput, ...]
    options: tuple[PermissionOption, ...] = tuple(PermissionOption)
    grant: ProjectRule | None = None  # what "always allow" would remember
    # The project's rules for this tool that do not cover this call (shown to explain why
    # the user is asked although they said "always" before).
    remembered: tuple[ProjectRule, ...] = ()
    # Options shown with another name or id than their kind's (e.g. leaving plan mode).
    names: Mapping[PermissionOption, str] = field(default_factory=dict)
    ids: Mapping[PermissionOption, str] = field(default_factory=dict)
    # A sub-agent's call, asked on its parent session: the child's session id and agent.
    child_session_id: str | None = None
    agent: str | None = None

    def option_id(self, option: PermissionOption) -> str:
        return self.ids.get(option, option.value)

    def option_name(self, option: PermissionOption) -> str:
        return self.names.get(option, option.label)


class PermissionUnavailable(Exception):
    """The client could not be asked (it is gone or answered with an error)."""


class PermissionAsker(Protocol):
    @abstractmethod
    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        """The option the user chose, or None when the client cancelled the request.

        Raises PermissionUnavailable when the client cannot answer."""
