"""What is one sub-agent run's own in its turn, made from its parent's call."""

from dataclasses import dataclass

from application.agent_loop.system_prompts import SystemPrompt
from application.knowledge.system_prompt import named_agent_system_prompt, subagent_system_prompt
from application.ports.event_sink import EventSink
from application.ports.tools import ToolContext, ToolRunner
from application.subagents.child_gate import NobodyAsked, ParentAsks, PermissionRoute
from application.subagents.child_output import ChildOutput
from application.subagents.child_run import ChildRun
from application.subagents.child_tools import ChildPrompt, ChildTools
from application.tools.toolbox import Toolbox


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSeat:
    """Where the child's events go, the tools it has, what it is told, and where its calls
    that would ask are decided."""

    output: EventSink
    tools: Toolbox
    prompt: SystemPrompt
    route: PermissionRoute


def child_seat(runner: ToolRunner, context: ToolContext, run: ChildRun) -> ChildSeat:
    """The child's own: its events to the parent's clients, its tools in the parent's
    place, its kind's prompt with what the parent's turn was told of the project, and who
    decides what would ask (the researcher never asks anyone)."""
    instructions = context.briefing.instructions
    agent = run.agent
    text = (
        named_agent_system_prompt(agent.prompt, cwd=context.cwd, instructions=instructions)
        if agent is not None
        else subagent_system_prompt(cwd=context.cwd, instructions=instructions)
    )
    route: PermissionRoute = NobodyAsked()
    if agent is not None and context.permit is not None:
        route = ParentAsks(permit=context.permit, run=run)
    return ChildSeat(
        output=ChildOutput(run=run),
        tools=ChildTools(runner=runner, context=context, names=run.tools),
        prompt=ChildPrompt(text),
        route=route,
    )
