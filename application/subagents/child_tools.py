"""What a sub-agent works with: a few of the runner's tools, in its parent's place, and
the prompt of its kind (the researcher's, or a named agent's)."""

from dataclasses import replace

from application.agent_loop.system_prompts import SystemPrompt
from application.ports.tools import (
    ChildPermit,
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
    unreported,
)
from application.runtime.turn_control import TurnControl
from application.tools.call_watch import After, CallWatch, nothing
from application.tools.own_tools import OwnTools
from application.tools.toolbox import Toolbox
from domain.content import ToolResultBlock, ToolUseBlock
from domain.session import Session
from domain.tool_call import ToolCallRecord


class ChildTools(Toolbox):
    """The runner's tools named for the child (the researcher's read-only ones, or a named
    agent's list), each looked at and run as its parent's call would be: in the parent's
    directories and workspace, with the parent's briefing. Any other name is a problem."""

    def __init__(self, *, runner: ToolRunner, context: ToolContext, names: tuple[str, ...]) -> None:
        self._runner = runner
        self._context = context
        self._names = names

    def definitions(self, session: Session) -> tuple[ToolDefinition, ...]:
        return self._runner.definitions(self._names)

    async def look(self, session: Session, use: ToolUseBlock) -> ToolPlan:
        if use.name not in self._names:
            return ToolPlan(problem=f"{use.name} is not available to a sub-agent.")
        return await self._runner.plan(use.name, use.input, self._context)

    async def run(
        self, session: Session, call: ToolCallRecord, progress: Progress, permit: ChildPermit
    ) -> ToolResult:
        # None of the runner's tools starts a sub-agent or reports to the parent's clients.
        context = replace(self._context, call_id=call.id, report=unreported, permit=None)
        return await self._runner.run(call.name, call.arguments, context, progress)


class RunnerCalls(OwnTools, CallWatch):
    """A sub-agent's calls all run through the runner (it has none of a session's own
    tools), and nothing is kept of their effects: no file checkpoints (its parent's rewind
    does not reach them), no instructions of the directories they work in."""

    async def run(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock | None:
        return None

    async def before(self, session: Session, call: ToolCallRecord) -> After:
        return nothing

    async def nested(self, session: Session, call: ToolCallRecord) -> str:
        return ""


class ChildPrompt(SystemPrompt):
    """The child's system prompt, the same for each of its requests: it works in one
    directory, told what its parent's turn was told of the project."""

    def __init__(self, text: str) -> None:
        self._text = text

    def system(self, session: Session, tools: tuple[ToolDefinition, ...]) -> str:
        return self._text
