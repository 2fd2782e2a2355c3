"""Which tools a session has, and what they are given to work with."""

from dataclasses import replace

from application.knowledge.named_agents import NamedAgentTools
from application.ports.elicitation import ElicitationMode, Elicitor
from application.ports.event_sink import EventSink
from application.ports.knowledge import ProjectKnowledge
from application.ports.tools import (
    ChildPermit,
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.ports.workspace import Workspaces
from application.runtime.registry import ActiveSession, SessionRegistry
from application.tasks.task_tools import TASK_TOOLS, check_task_call
from application.tools.ask_user import ASK_USER_TOOL, check_question
from application.tools.plan_tool import TODO_WRITE_TOOL, check_plan
from application.tools.sandbox_waivers import SandboxWaivers
from application.tools.session_tools import SessionTools
from application.tools.session_workspace import session_workspace
from application.tools.skill_tools import SkillTools
from application.tools.toolbox import Toolbox
from domain.config import Catalog
from domain.content import ToolUseBlock
from domain.events import AgentEvent
from domain.knowledge import Briefing
from domain.modes import ModeId
from domain.plan import TODO_WRITE
from domain.questions import ASK_USER
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.tools import EXIT_PLAN_MODE, TASK_KILL, TASK_OUTPUT

EXIT_PLAN_TOOL = ToolDefinition(
    name=EXIT_PLAN_MODE,
    description=(
        "Present your plan to the user and ask to leave plan mode. Call it when the plan is "
        "complete: the user approves it (the session then leaves plan mode and you carry it "
        "out) or asks you to keep planning."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "plan": {
                "type": "string",
                "description": "The plan, in markdown: concise, step by step, naming files.",
            }
        },
        "required": ["plan"],
    },
)


class ToolCatalogue(Toolbox):
    """The tools of one session, as its mode and turn make them.

    - The built-in tools, the session's MCP servers' tools, `load_skill` when the turn has
      skills, and our own `todo_write`, `task_output` and `task_kill`; `exit_plan_mode` too
      while in plan mode; `ask_user` while the session's controlling client can show a
      question (form elicitation).
    - A call is looked at and run by the tool it names, with the session's directories,
      briefing and workspace (the editor's files where it lends them); a tool's own events
      (a sub-agent's) go to the session's clients.
    """

    def __init__(
        self,
        *,
        runner: ToolRunner,
        catalog: Catalog,
        registry: SessionRegistry,
        workspaces: Workspaces,
        knowledge: ProjectKnowledge,
        elicitor: Elicitor,
        sink: EventSink,
        waivers: SandboxWaivers,
    ) -> None:
        self._waivers = waivers
        self._runner = runner
        self._catalog = catalog
        self._registry = registry
        self._workspaces = workspaces
        self._knowledge = knowledge
        self._elicitor = elicitor
        self._sink = sink

    def definitions(self, session: Session) -> tuple[ToolDefinition, ...]:
        tools = (*self._tools(session).definitions(), TODO_WRITE_TOOL)
        if self.can_ask_user(session):
            tools = (*tools, ASK_USER_TOOL)
        tools = (*tools, *TASK_TOOLS)
        return (
            (*tools, EXIT_PLAN_TOOL)
            if self._catalog.usable_mode(session.mode_id) == ModeId.PLAN
            else tools
        )

    def can_ask_user(self, session: Session) -> bool:
        return self._elicitor.can_ask(session.id, ElicitationMode.FORM)

    async def look(self, session: Session, use: ToolUseBlock) -> ToolPlan:
        """The call looked at before anything happens; our own tools here, the rest by
        the runner."""
        if use.name == EXIT_PLAN_MODE:
            return ToolPlan()
        if use.name == TODO_WRITE:
            return check_plan(use.input)
        if use.name == ASK_USER:
            if not self.can_ask_user(session):
                return ToolPlan(
                    problem="ask_user is not available: the user's client cannot "
                    "show questions. Decide yourself, or ask in your reply."
                )
            return check_question(use.input)
        if use.name in (TASK_OUTPUT, TASK_KILL):
            return check_task_call(use.input)
        return await self._tools(session).plan(use.name, use.input, self._context(session))

    async def run(
        self,
        session: Session,
        call: ToolCallRecord,
        progress: Progress,
        permit: ChildPermit,
    ) -> ToolResult:
        tools = self._tools(session)

        async def report(event: AgentEvent) -> None:
            await self._sink.emit(session.id, event)

        waived = self._waivers.take(call.id)
        context = replace(
            self._context(session, waived=waived), call_id=call.id, permit=permit, report=report
        )
        return await tools.run(call.name, call.arguments, context, progress)

    def _active(self, session: Session) -> ActiveSession | None:
        return self._registry.find(session.id)

    def _tools(self, session: Session) -> ToolRunner:
        """The built-in tools, this session's MCP servers' tools, load_skill when the
        turn has skills, and the `agent` tool offering the project's named agents."""
        active = self._active(session)
        tools: ToolRunner = SessionTools(self._runner, active.mcp if active else None)
        if active is not None:
            tools = SkillTools(tools, self._knowledge, active.briefing.skills)
        if active is not None and active.briefing.agents:
            tools = NamedAgentTools(tools, active.briefing.agents)
        return tools

    def _context(self, session: Session, *, waived: bool = False) -> ToolContext:
        active = self._active(session)
        return ToolContext(
            cwd=session.cwd,
            model=session.model,
            session_id=session.id,
            roots=session.additional_directories,
            briefing=active.briefing if active is not None else Briefing(),
            workspace=session_workspace(self._workspaces, self._catalog, session, waived=waived),
        )
