"""The questions a session puts to its clients, and their answers, as the application means
them: a tool call to allow, or input to give (an elicitation). How a client is shown one,
and how its answer reads, is the protocol version's business (adapters/acp_v1)."""

from dataclasses import dataclass

from application.ports.elicitation import Elicitation, ElicitationAnswer
from application.ports.permissions import PermissionRequest
from domain.permission import PermissionOption


@dataclass(frozen=True, slots=True)
class PermissionQuestion:
    """May this tool call run? Posted to the other replicas' clients too."""

    session_id: str
    request: PermissionRequest

    @property
    def subject(self) -> str:
        """The tool call it is about (a client attaching meanwhile is told so)."""
        return str(self.request.tool_call_id)


@dataclass(frozen=True, slots=True)
class ElicitationQuestion:
    """Input the user is asked for: a form to fill in, or a page to visit."""

    session_id: str
    elicitation: Elicitation


Question = PermissionQuestion | ElicitationQuestion


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    option: PermissionOption | None  # None: the client cancelled the request


Answer = PermissionAnswer | ElicitationAnswer
