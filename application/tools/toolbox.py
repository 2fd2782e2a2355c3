"""The tools one agent's turn works with, as the turn's pieces reach them: the session's own
(ToolCatalogue), or a sub-agent's few (application.subagents)."""

from abc import abstractmethod
from typing import Protocol

from application.ports.tools import ChildPermit, Progress, ToolDefinition, ToolPlan, ToolResult
from domain.content import ToolUseBlock
from domain.session import Session
from domain.tool_call import ToolCallRecord


class Toolbox(Protocol):
    """What the model is offered, how each of its calls is looked at, and how an allowed
    one runs. A call naming a tool the box does not hold is looked at as a problem (the call
    fails without running), never run."""

    @abstractmethod
    def definitions(self, session: Session) -> tuple[ToolDefinition, ...]: ...

    @abstractmethod
    async def look(self, session: Session, use: ToolUseBlock) -> ToolPlan:
        """The call looked at before anything happens to it."""

    @abstractmethod
    async def run(
        self, session: Session, call: ToolCallRecord, progress: Progress, permit: ChildPermit
    ) -> ToolResult:
        """Run an allowed call; `permit`: how a sub-agent it starts asks about its calls."""
