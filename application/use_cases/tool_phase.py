import asyncio
from dataclasses import dataclass, replace

from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.knowledge import ProjectKnowledge
from application.ports.permissions import (
    PermissionAsker,
    PermissionRequest,
    PermissionUnavailable,
)
from application.ports.tools import ToolContext, ToolDefinition, ToolPlan, ToolResult, ToolRunner
from application.ports.tracing import NO_TRACING, Tracer
from application.ports.unit_of_work import UnitOfWork
from application.ports.workspace import Workspaces
from application.runtime import ActiveSession, SessionRegistry, TurnCancelled, TurnControl
from application.use_cases.briefing import Briefer
from application.use_cases.plan_tool import TODO_WRITE_TOOL, check_plan, plan_written
from application.use_cases.session_settings import ChangeSettings
from application.use_cases.session_tools import SessionTools
from application.use_cases.skill_tools import SkillTools
from domain.config import Catalog
from domain.content import ToolResultBlock, ToolUseBlock
from domain.events import PlanUpdated, ToolCallStarted, ToolCallUpdated
from domain.ids import ToolCallId
from domain.knowledge import Briefing
from domain.modes import ModeId
from domain.permission import Decider, PermissionDecision, PermissionOption, Verdict, decide
from domain.plan import TODO_WRITE, read_plan
from domain.project_rules import ProjectRule, rule_for
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolOutput
from domain.tools import EXIT_PLAN_MODE, Category, spec_for, title_for
from domain.usage import Usage

DENIED = "Permission denied."
CANCELLED = "Cancelled by the user before the tool finished; its result was discarded."
NOT_RUN = "Not run: the turn was cancelled."
PLANNING = (
    "Not run: the session is in plan mode, where no file is changed and no command runs. "
    "Keep researching with the read-only tools, then call exit_plan_mode with your plan to "
    "ask the user to approve it."
)
# Leaving plan mode: the three answers, each an ACP option kind, and the mode it picks.
LEAVE_PLAN_OPTIONS = (
    PermissionOption.ALLOW_ALWAYS,
    PermissionOption.ALLOW_ONCE,
    PermissionOption.REJECT_ONCE,
)
LEAVE_PLAN_MODES = {
    PermissionOption.ALLOW_ALWAYS: ModeId.ACCEPT_EDITS,
    PermissionOption.ALLOW_ONCE: ModeId.DEFAULT,
}
LEAVE_PLAN_IDS = {
    PermissionOption.ALLOW_ALWAYS: ModeId.ACCEPT_EDITS.value,
    PermissionOption.ALLOW_ONCE: ModeId.DEFAULT.value,
    PermissionOption.REJECT_ONCE: ModeId.PLAN.value,
}
LEAVE_PLAN_NAMES = {
    PermissionOption.ALLOW_ALWAYS: "Yes, and accept edits",
    PermissionOption.ALLOW_ONCE: "Yes, and ask before each edit",
    PermissionOption.REJECT_ONCE: "No, keep planning",
}
LEFT_PLAN = {
    ModeId.ACCEPT_EDITS: "The session is now in accept-edits mode: carry out the plan; "
    "file edits in the project run without asking, commands still ask.",
    ModeId.DEFAULT: "The session is now in default mode: carry out the plan; edits and "
    "commands ask the user first.",
}
KEEP_PLANNING = (
    "The user did not approve the plan and wants to keep planning: ask what to change, or "
    "revise the plan and call exit_plan_mode again."
)
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
WITHOUT_ALWAYS_ALLOW = (
    PermissionOption.ALLOW_ONCE,
    PermissionOption.REJECT_ONCE,
    PermissionOption.REJECT_ALWAYS,
)
# Tools whose paths bring a subdirectory's instructions (AGENTS.md) into the context.
WORKS_IN_DIRECTORIES = frozenset({"read_file", "write_file", "edit_file", "list_files"})
PROGRESS_TAIL = 16_000  # characters of live output re-sent with each progress update
# Allowed without asking and without a decision worth storing: reads inside cwd, the plan.
UNRECORDED = frozenset({Category.READ, Category.THINK})


@dataclass(frozen=True, slots=True)
class _Answer:
    allowed: bool
    refusal: str = DENIED
    cancel_turn: bool = False


def always_name(grant: ProjectRule) -> str:
    """What "always allow" will remember, said on the option itself."""
    command = grant.command
    if command is None:
        return f"Always allow {grant.tool_name} in this project"
    if command.exact:
        return f"Always allow exactly `{command.text}` in this project"
    return f"Always allow `{command.text}` commands in this project"


class ToolPhase:
    """Runs the tool uses of one assistant message, in the order given.

    - Each call is shown (`tool_call`, pending) before anything happens to it.
    - The session's rules decide: reads inside cwd run at once; writes, execution and
      anything outside cwd ask the client first; "always" answers are remembered.
    - A rejected call does not run: the model gets "Permission denied." and the turn goes on.
    - Our own tools run here, not in the runner: `exit_plan_mode` asks the user to leave
      plan mode, `todo_write` completes at once and sends the whole plan (PlanUpdated).
    - The client cancelling the permission request, or the turn being cancelled, ends the
      turn: the running tool is stopped and every tool use still gets a result, so the
      history stays acceptable to the provider.
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        runner: ToolRunner,
        asker: PermissionAsker,
        sink: EventSink,
        clock: Clock,
        permission_timeout: float,
        catalog: Catalog,
        settings: ChangeSettings,
        registry: SessionRegistry | None = None,
        workspaces: Workspaces | None = None,  # None: the runner's own (local) files
        knowledge: ProjectKnowledge | None = None,
        briefer: Briefer | None = None,
        tracer: Tracer = NO_TRACING,
    ) -> None:
        self._tracer = tracer
        self._knowledge = knowledge
        self._briefer = briefer
        self._uow = uow
        self._workspaces = workspaces
        self._runner = runner
        self._registry = registry
        self._asker = asker
        self._sink = sink
        self._clock = clock
        self._timeout = permission_timeout
        self._catalog = catalog
        self._settings = settings
        self.spent = Usage()  # what the tools' own model requests used (see ToolResult.usage)

    def mode_of(self, session: Session) -> str:
        return self._catalog.usable_mode(session.mode_id)

    def _active(self, session: Session) -> ActiveSession | None:
        return self._registry.find(session.id) if self._registry is not None else None

    def _tools(self, session: Session) -> ToolRunner:
        """The built-in tools, this session's MCP servers' tools, and load_skill when the
        turn has skills."""
        active = self._active(session)
        tools: ToolRunner = SessionTools(self._runner, active.mcp if active else None)
        if self._knowledge is not None and active is not None:
            tools = SkillTools(tools, self._knowledge, active.briefing.skills)
        return tools

    def definitions(self, session: Session) -> tuple[ToolDefinition, ...]:
        tools = (*self._tools(session).definitions(), TODO_WRITE_TOOL)
        return (*tools, EXIT_PLAN_TOOL) if self.mode_of(session) == ModeId.PLAN else tools

    async def run(
        self,
        session: Session,
        control: TurnControl,
        uses: tuple[ToolUseBlock, ...],
        *,
        refusal: str | None = None,
    ) -> tuple[ToolResultBlock, ...]:
        """Results for every use, in order. With `refusal`, each call is shown and answered
        with it, and none runs."""
        results = []
        for use in uses:
            if control.cancelled.is_set():
                results.append(ToolResultBlock(tool_use_id=use.id, content=NOT_RUN, is_error=True))
            else:
                results.append(await self._traced(session, control, use, refusal))
        return tuple(results)

    async def _traced(
        self, session: Session, control: TurnControl, use: ToolUseBlock, refusal: str | None
    ) -> ToolResultBlock:
        attributes = {
            "session.id": session.id,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": use.name,
            "gen_ai.tool.call.id": use.id,
        }
        with self._tracer.span(f"execute_tool {use.name}", attributes) as span:
            result = await self._one(session, control, use, refusal)
            span.set("iac_code.tool.is_error", result.is_error)
            return result

    async def _one(
        self, session: Session, control: TurnControl, use: ToolUseBlock, refusal: str | None
    ) -> ToolResultBlock:
        spec = spec_for(use.name)
        call = ToolCallRecord(
            id=ToolCallId(use.id),
            name=use.name,
            title=title_for(use.name, use.input),
            kind=spec.kind,
            arguments=dict(use.input),
            status=ToolCallStatus.PENDING,
        )
        plan = await self._look(session, use)
        call = replace(call, locations=plan.locations, title=plan.title or call.title)
        await self._show(session, control, call)
        if problem := refusal or plan.problem:
            return await self._fail(session, call, problem)
        if call.name == EXIT_PLAN_MODE:
            return await self._exit_plan(session, control, call)
        answer = await self._permit(session, control, call, plan)
        if answer.cancel_turn:
            control.cancelled.set()
            return await self._finish(
                session, call, ToolCallStatus.CANCELLED, ToolResult(text=NOT_RUN, is_error=True)
            )
        if not answer.allowed:
            return await self._fail(session, call, answer.refusal)
        if call.name == TODO_WRITE:
            return await self._write_plan(session, call)
        return await self._execute(session, control, call)

    async def announce(
        self, session: Session, control: TurnControl, call_id: str, name: str
    ) -> None:
        """Show a call the model has begun to write: its input is not there yet."""
        if call_id in control.announced:
            return
        control.announced.add(call_id)
        await self._emit(
            session,
            ToolCallStarted(
                tool_call_id=ToolCallId(call_id),
                title=name,
                kind=spec_for(name).kind,
                arguments=None,
            ),
        )

    async def settle_announced(self, session: Session, control: TurnControl) -> None:
        """Calls shown early that will not run (the turn was cancelled, the stream broke):
        the client is told they failed rather than left pending."""
        for call_id in sorted(control.announced):
            await self._emit(
                session,
                ToolCallUpdated(tool_call_id=ToolCallId(call_id), status=ToolCallStatus.CANCELLED),
            )
        control.announced.clear()

    async def _show(self, session: Session, control: TurnControl, call: ToolCallRecord) -> None:
        """The call with its input: an update of the one shown early, else shown now."""
        if call.id in control.announced:
            control.announced.discard(call.id)
            shown: ToolCallStarted | ToolCallUpdated = ToolCallUpdated(
                tool_call_id=call.id,
                title=call.title,
                locations=call.locations,
                arguments=call.arguments,
            )
        else:
            shown = ToolCallStarted(
                tool_call_id=call.id,
                title=call.title,
                kind=call.kind,
                arguments=call.arguments,
                locations=call.locations,
            )
        await self._emit(session, shown)

    async def _look(self, session: Session, use: ToolUseBlock) -> ToolPlan:
        """The call looked at before anything happens; our own tools here, the rest by
        the runner."""
        if use.name == EXIT_PLAN_MODE:
            return ToolPlan()
        if use.name == TODO_WRITE:
            return check_plan(use.input)
        return await self._tools(session).plan(use.name, use.input, self._context(session))

    async def _permit(
        self, session: Session, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> _Answer:
        spec = spec_for(call.name)
        rules = [] if spec.category in UNRECORDED else await self._project_rules(session)
        covering = next((r for r in rules if r.covers(call.name, call.arguments)), None)
        verdict = decide(
            spec,
            self.mode_of(session),
            always_asks=plan.always_asks,
            rejected=session.permissions.rejects(call.name),
            project_allows=covering is not None,
        )
        match verdict:
            case Verdict.ALLOW if spec.category in UNRECORDED:
                return _Answer(allowed=True)
            case Verdict.ALLOW:
                decider = Decider.PROJECT_RULE if covering else Decider.MODE
                await self._record(session, call, PermissionOption.ALLOW_ONCE, decider)
                return _Answer(allowed=True)
            case Verdict.REFUSE:
                await self._record(session, call, PermissionOption.REJECT_ONCE, Decider.MODE)
                return _Answer(allowed=False, refusal=PLANNING)
            case Verdict.REJECT:
                await self._record(
                    session, call, PermissionOption.REJECT_ALWAYS, Decider.SESSION_RULE
                )
                return _Answer(allowed=False)
        return await self._ask(session, control, call, plan, rules)

    async def _ask(
        self,
        session: Session,
        control: TurnControl,
        call: ToolCallRecord,
        plan: ToolPlan,
        rules: list[ProjectRule],
    ) -> _Answer:
        reason = plan.ask_reason
        grant = None
        if not plan.always_asks:
            # "Always allow" is offered only where it can be remembered safely and would
            # apply again: never outside the project, never for a compound command.
            grant = rule_for(
                cwd=session.cwd,
                tool_name=call.name,
                arguments=call.arguments,
                at=self._clock.now(),
                session_id=session.id,
            )
        request = PermissionRequest(
            tool_call_id=call.id,
            tool_name=call.name,
            # The user must see why a call that looks harmless is asked about.
            title=f"{call.title} ({reason})" if reason else call.title,
            kind=call.kind,
            arguments=call.arguments,
            locations=call.locations,
            preview=(TextOutput(text=reason), *plan.preview) if reason else plan.preview,
            options=tuple(PermissionOption) if grant else WITHOUT_ALWAYS_ALLOW,
            grant=grant,
            names={PermissionOption.ALLOW_ALWAYS: always_name(grant)} if grant else {},
            remembered=tuple(r for r in rules if r.tool_name == call.name),
        )
        try:
            chosen = await self._put(session, control, request)
        except TurnCancelled:
            await self._record(session, call, None, Decider.USER)
            return _Answer(allowed=False, cancel_turn=True)
        except TimeoutError:
            await self._record(session, call, None, Decider.TIMEOUT)
            return _Answer(
                allowed=False,
                refusal=(
                    f"Permission denied: nobody answered the permission request within "
                    f"{self._timeout:g} s, so the tool did not run."
                ),
            )
        except PermissionUnavailable as exc:
            await self._record(session, call, None, Decider.CLIENT_ERROR)
            return _Answer(allowed=False, refusal=f"Permission denied: {exc}")
        if chosen is PermissionOption.ALLOW_ALWAYS and grant is None:
            chosen = PermissionOption.ALLOW_ONCE  # not offered: never remembered
        await self._record(session, call, chosen, Decider.USER, grant=grant)
        if chosen is None:
            return _Answer(allowed=False, cancel_turn=True)
        return _Answer(allowed=chosen.allows)

    async def _exit_plan(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock:
        """The model asks to leave plan mode with its plan; the user picks the next mode."""
        text = call.arguments.get("plan")
        if self.mode_of(session) != ModeId.PLAN:
            return await self._fail(session, call, "Not in plan mode: go on with the task.")
        if not isinstance(text, str) or not text.strip():
            return await self._fail(
                session, call, "exit_plan_mode needs the plan, as markdown, in `plan`."
            )
        request = PermissionRequest(
            tool_call_id=call.id,
            tool_name=call.name,
            title=call.title,
            kind=call.kind,
            arguments=call.arguments,
            locations=(),
            preview=(TextOutput(text=text),),
            options=LEAVE_PLAN_OPTIONS,
            names=LEAVE_PLAN_NAMES,
            ids=LEAVE_PLAN_IDS,
        )
        try:
            chosen = await self._put(session, control, request)
        except TurnCancelled:
            chosen = None
        except (TimeoutError, PermissionUnavailable):
            chosen = PermissionOption.REJECT_ONCE  # nobody approved: keep planning
        await self._record(session, call, chosen, Decider.USER)
        if chosen is None:
            control.cancelled.set()
            result = ToolResult(text=NOT_RUN, is_error=True)
            return await self._finish(session, call, ToolCallStatus.CANCELLED, result)
        next_mode = LEAVE_PLAN_MODES.get(chosen)
        if next_mode is None:
            result = ToolResult(text=KEEP_PLANNING)
        else:
            await self._settings.mode(session, next_mode)
            result = ToolResult(text=f"The user approved the plan. {LEFT_PLAN[next_mode]}")
        output = (TextOutput(text=text),)
        return await self._finish(
            session, call, ToolCallStatus.COMPLETED, replace(result, output=output)
        )

    async def _write_plan(self, session: Session, call: ToolCallRecord) -> ToolResultBlock:
        """The model's plan, checked in _look: the call completes, then the client gets the
        whole plan (the order a load replays it in)."""
        entries = read_plan(call.arguments)
        await self._emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        result = ToolResult(text=plan_written(entries))
        block = await self._finish(session, call, ToolCallStatus.COMPLETED, result)
        await self._sink.emit(session.id, PlanUpdated(entries=entries))
        return block

    async def _put(
        self, session: Session, control: TurnControl, request: PermissionRequest
    ) -> PermissionOption | None:
        """Ask the client, for at most the permission timeout. Raises TurnCancelled,
        TimeoutError or PermissionUnavailable."""
        ask = self._asker.ask(session.id, request)
        return await control.guard(asyncio.wait_for(ask, self._timeout))

    async def _project_rules(self, session: Session) -> list[ProjectRule]:
        async with self._uow.reading() as uow:
            return await uow.rules.for_project(session.cwd)

    async def _execute(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock:
        await self._emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        tail = ""

        async def progress(chunk: str | ToolOutput) -> None:
            nonlocal tail
            if not isinstance(chunk, str):  # e.g. the editor's terminal, shown at once
                await self._emit(session, ToolCallUpdated(tool_call_id=call.id, output=(chunk,)))
                return
            tail = (tail + chunk)[-PROGRESS_TAIL:]  # bounded: cost stays flat as output grows
            await self._emit(
                session, ToolCallUpdated(tool_call_id=call.id, output=(TextOutput(text=tail),))
            )

        try:
            result = await control.guard(
                self._tools(session).run(
                    call.name, call.arguments, self._context(session), progress
                )
            )
        except TurnCancelled:
            return await self._finish(
                session, call, ToolCallStatus.CANCELLED, ToolResult(text=CANCELLED, is_error=True)
            )
        self.spent = self.spent + result.usage
        status = ToolCallStatus.FAILED if result.is_error else ToolCallStatus.COMPLETED
        if not result.is_error and call.name in WORKS_IN_DIRECTORIES:
            result = replace(result, text=result.text + await self._nested(session, call))
        return await self._finish(session, call, status, result)

    async def _nested(self, session: Session, call: ToolCallRecord) -> str:
        """A subdirectory's instructions, the first time the agent works there."""
        active = self._active(session)
        if self._briefer is None or active is None:
            return ""
        return await self._briefer.nested(active, call.locations)

    async def _finish(
        self, session: Session, call: ToolCallRecord, status: ToolCallStatus, result: ToolResult
    ) -> ToolResultBlock:
        output = result.output or (TextOutput(text=result.text),)
        raw = dict(result.raw_output) or {"result": result.text, "isError": result.is_error}
        await self._emit(
            session,
            ToolCallUpdated(tool_call_id=call.id, status=status, output=output, raw_output=raw),
        )
        record = replace(call, status=status, output=output, raw_output=raw)
        async with self._uow as uow:
            await uow.activity.record_tool_call(session.id, record)
            await uow.commit()
        return ToolResultBlock(tool_use_id=call.id, content=result.text, is_error=result.is_error)

    async def _fail(self, session: Session, call: ToolCallRecord, reason: str) -> ToolResultBlock:
        """The call fails without running: the model is told `reason`."""
        result = ToolResult(text=reason, is_error=True)
        return await self._finish(session, call, ToolCallStatus.FAILED, result)

    async def _record(
        self,
        session: Session,
        call: ToolCallRecord,
        option: PermissionOption | None,
        decider: Decider,
        *,
        grant: ProjectRule | None = None,
    ) -> None:
        decision = PermissionDecision(
            tool_call_id=call.id,
            tool_name=call.name,
            arguments=dict(call.arguments),
            option=option,
            decided_by=decider,
            decided_at=self._clock.now(),
        )
        session.permissions.learn(decision)
        async with self._uow as uow:
            await uow.activity.record_permission(session.id, decision)
            if grant is not None and option is PermissionOption.ALLOW_ALWAYS:
                await uow.rules.add(grant)
            await uow.commit()

    def _context(self, session: Session) -> ToolContext:
        active = self._active(session)
        context = ToolContext(
            cwd=session.cwd,
            model=session.model,
            session_id=session.id,
            roots=session.additional_directories,
            briefing=active.briefing if active is not None else Briefing(),
        )
        if self._workspaces is None:
            return context
        directories = (context.cwd, *context.roots)
        return replace(context, workspace=self._workspaces.for_session(session.id, directories))

    async def _emit(self, session: Session, event: ToolCallStarted | ToolCallUpdated) -> None:
        await self._sink.emit(session.id, event)
