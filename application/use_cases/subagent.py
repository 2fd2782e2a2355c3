import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from application.errors import ModelError
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelRequest, ModelResponse
from application.ports.tools import (
    ChildCall,
    ChildPermit,
    Progress,
    Report,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.system_prompt import (
    environment_context,
    named_agent_system_prompt,
    subagent_system_prompt,
)
from application.use_cases.child_sessions import ChildSessions
from application.use_cases.named_agents import DEFAULT_AGENT, chosen_agent
from application.use_cases.subagent_record import KEY, subagent_record
from application.use_cases.subagent_runs import SubagentRuns
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.context import model_view
from domain.events import (
    AgentEvent,
    ChildEvent,
    SessionMessageSent,
    SubagentChanged,
    SubagentState,
    TextDelta,
    ToolCallStarted,
    ToolCallUpdated,
)
from domain.ids import MessageId, SessionId, ToolCallId
from domain.knowledge import AgentProfile
from domain.message import Message, Role
from domain.session import Session
from domain.spawn import Spawn
from domain.stop_reason import ModelStop
from domain.tool_call import TextOutput, ToolCallStatus, ToolOutput
from domain.tools import READ_ONLY_TOOLS, Category, call_record, spec_for, title_for
from domain.usage import Usage

STOPPED_ALONE = "The user cancelled this sub-agent before it answered."
# Why a call that would ask is refused to a child nobody can be asked for.
_NEEDS = {True: "it reaches outside the working directory", False: "it needs the user's permission"}
_SHOWN_RESULT = 4_000  # characters of a child's tool result shown in its call

AGENT_TOOL = ToolDefinition(
    name="agent",
    description=(
        "Start a sub-agent with its own conversation to research a question in the working "
        "directory. It can only read (read_file, list_files, glob, grep, web_fetch) and "
        "returns its final answer. Use it for broad searches that would flood this "
        "conversation. Several agent calls in one response run at the same time, each "
        "with its own conversation: use that for independent questions."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task for the sub-agent."},
            "description": {"type": "string", "description": "A short label (3-5 words)."},
        },
        "required": ["prompt"],
    },
)


class SubAgentTools(ToolRunner):
    """Adds the `agent` tool to a runner: a nested agent loop with read-only tools.

    The sub-agent's read-only tools run without asking, but only inside the working
    directory; anything else is refused to it. Its model errors become an error result.
    """

    def __init__(
        self,
        *,
        inner: ToolRunner,
        llm: LLMClient,
        clock: Clock,
        ids: IdGenerator,
        max_requests: int,
        max_tokens: int,
        runs: SubagentRuns | None = None,  # where a client can cancel a child alone
        children: ChildSessions | None = None,  # where each run is stored as a session
    ) -> None:
        self._children = children
        self._runs = runs
        self._inner = inner
        self._llm = llm
        self._clock = clock
        self._ids = ids
        self._max_requests = max_requests
        self._max_tokens = max_tokens

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        inner = self._inner.definitions(names)
        return inner if names is not None and "agent" not in names else (*inner, AGENT_TOOL)

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        if name != "agent":
            return await self._inner.plan(name, arguments, context)
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolPlan(problem="The agent tool needs a non-empty `prompt`.")
        chosen = chosen_agent(arguments, context.briefing.agents)
        return ToolPlan(problem=chosen) if isinstance(chosen, str) else ToolPlan()

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        if name != "agent":
            return await self._inner.run(name, arguments, context, progress)
        chosen = chosen_agent(arguments, context.briefing.agents)
        if isinstance(chosen, str):  # the agent file went away since the call was looked at
            return ToolResult(text=chosen, is_error=True)
        run = _ChildRun(
            agent=chosen,
            child_id=self._ids.session_id(),
            parent_id=SessionId(context.session_id),
            call_id=ToolCallId(context.call_id or ""),
            report=context.report,
            progress=progress,
            store=self._children,
        )
        prompt = str(arguments["prompt"])
        label = arguments.get("description")
        await run.announce(label if isinstance(label, str) and label.strip() else None, prompt)
        await run.open_session(context, self._clock.now())
        await run.tell_child(  # the task, as the child's transcript starts
            SessionMessageSent(
                message_id=self._ids.message_id(),
                sender=run.parent_id,
                recipient=run.child_id,
                text=prompt,
            )
        )
        result = await self._followed(context, prompt, run)
        answer_id = None
        if result.is_error:
            state = SubagentState.CANCELLED if run.stopped_alone else SubagentState.FAILED
            await run.end(state, result.usage, error=None if run.stopped_alone else result.text)
        else:
            state, answer_id = SubagentState.DONE, self._ids.message_id()
            await run.answer(answer_id, result.text)
            await run.end(state, result.usage)
        kept = run.record(state, result.usage, answer_id)
        # The user is shown how it went, then the answer; the model gets the answer alone.
        shown = TextOutput(text=f"{''.join(run.lines)}\n{result.text}")
        return replace(result, output=(shown,), raw_output={**result.raw_output, KEY: kept})

    async def _followed(self, context: ToolContext, prompt: str, run: "_ChildRun") -> ToolResult:
        """The child's conversation as a task of its own, which a client may cancel alone
        (the parent then gets an error result and goes on); cancelling the parent's turn
        cancels it too."""
        work = asyncio.ensure_future(self._converse(context, prompt, run))

        def stop() -> None:
            run.stopped_alone = True
            work.cancel()

        if self._runs is not None:
            self._runs.started(run.child_id, run.parent_id, stop)
        try:
            return await work
        except asyncio.CancelledError:
            if not run.stopped_alone:  # the parent's turn was cancelled
                await run.end(SubagentState.CANCELLED, run.used)
                raise
            return ToolResult(text=STOPPED_ALONE, is_error=True, usage=run.used)
        finally:
            if self._runs is not None:
                self._runs.ended(run.child_id)

    async def _converse(self, context: ToolContext, prompt: str, run: "_ChildRun") -> ToolResult:
        """The sub-agent's own loop: ask the model, run its read-only tools, until it
        answers."""
        # The same environment the calling turn was told, with the task.
        environment = context.briefing.environment
        messages: list[Message] = []
        await run.keep(
            messages,
            replace(
                self._message(Role.USER, (TextBlock(text=prompt),)),
                context=environment_context(environment) if environment else None,
            ),
        )
        tools = self._inner.definitions(run.tools)
        for _ in range(self._max_requests):
            try:
                response = await self._ask_model(context, messages, tools, run.agent)
            except ModelError as exc:
                return ToolResult(
                    text=f"The sub-agent's model request failed: {exc}",
                    is_error=True,
                    usage=run.used,
                )
            run.used = run.used + response.usage
            await run.keep(messages, self._message(Role.ASSISTANT, response.content))
            said = messages[-1].visible_text().strip()
            if said:
                await run.tell_child(TextDelta(message_id=messages[-1].id, text=said))
            if response.stop is not ModelStop.TOOL_USE:
                return ToolResult(
                    text=said or "(the sub-agent gave no answer)",
                    raw_output={"answer": said, "requests": len(messages) // 2},
                    usage=run.used,
                )
            results = [await self._run_tool(use, context, run) for use in messages[-1].tool_uses]
            await run.keep(messages, self._message(Role.USER, tuple(results)))
        return ToolResult(
            text=f"The sub-agent stopped after {self._max_requests} model "
            "requests without a final answer.",
            is_error=True,
            usage=run.used,
        )

    async def _ask_model(
        self,
        context: ToolContext,
        messages: list[Message],
        tools: tuple[ToolDefinition, ...],
        agent: AgentProfile | None,
    ) -> ModelResponse:
        instructions = context.briefing.instructions
        request = ModelRequest(
            model=agent.model if agent is not None and agent.model else context.model,
            system=(
                named_agent_system_prompt(agent.prompt, cwd=context.cwd, instructions=instructions)
                if agent is not None
                else subagent_system_prompt(cwd=context.cwd, instructions=instructions)
            ),
            messages=tuple(model_view(messages)),
            max_tokens=self._max_tokens,
            tools=tools,
        )
        async for event in self._llm.stream(request):
            if isinstance(event, ModelResponse):
                return event
        raise ModelError("The model stream ended without a complete response.")

    async def _run_tool(
        self, use: ToolUseBlock, context: ToolContext, run: "_ChildRun"
    ) -> ToolResultBlock:
        await run.tool_started(use)
        block = await self._child_tool(use, context, run)
        await run.tool_ended(use, block)
        return block

    async def _child_tool(
        self, use: ToolUseBlock, context: ToolContext, run: "_ChildRun"
    ) -> ToolResultBlock:
        if use.name not in run.tools:
            return ToolResultBlock(
                tool_use_id=use.id,
                is_error=True,
                content=f"{use.name} is not available to a sub-agent.",
            )
        plan = await self._inner.plan(use.name, use.input, context)
        asks = plan.always_asks or spec_for(use.name).category is not Category.READ
        # Only a named agent asks; the researcher never does (as before named agents).
        permit = context.permit if run.agent is not None else None
        if plan.problem or (asks and permit is None):
            reason = plan.problem or plan.ask_reason or _NEEDS[plan.always_asks]
            return ToolResultBlock(
                tool_use_id=use.id, is_error=True, content=f"Refused to the sub-agent: {reason}."
            )
        if asks and permit is not None:
            refusal = await run.asking(permit, _child_call(use, plan, run))
            if refusal is not None:
                return ToolResultBlock(tool_use_id=use.id, is_error=True, content=refusal)
        # The child's own tools' live output is not the parent call's: only its end shows.
        result = await self._inner.run(use.name, use.input, context, _quiet)
        return ToolResultBlock(tool_use_id=use.id, content=result.text, is_error=result.is_error)

    def _message(self, role: Role, content: tuple) -> Message:  # type: ignore[type-arg]
        return Message(
            id=self._ids.message_id(), role=role, content=content, created_at=self._clock.now()
        )


async def _quiet(_: str | ToolOutput) -> None:
    pass


def _child_call(use: ToolUseBlock, plan: ToolPlan, run: "_ChildRun") -> ChildCall:
    call = call_record(use, ToolCallStatus.PENDING, locations=plan.locations)
    mode = run.agent.mode if run.agent is not None else None
    return ChildCall(call=call, plan=plan, child_id=run.child_id, agent=run.name, mode=mode)


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(slots=True, kw_only=True)
class _ChildRun:
    """One sub-agent run as its parent's clients see it: a child session announced on the
    parent (`SubagentChanged`), its text and tool calls addressed to it (`ChildEvent`), its
    end with what it used; and, for clients that do not show sub-agents, progress lines in
    the parent's tool call."""

    agent: AgentProfile | None  # None: the built-in researcher
    child_id: SessionId
    parent_id: SessionId
    call_id: ToolCallId
    report: Report
    progress: Progress
    used: Usage = field(default_factory=Usage)
    title: str | None = None
    description: str | None = None
    stopped_alone: bool = False  # a client cancelled this child (not its parent)
    store: ChildSessions | None = None  # None: the run is not stored as a session
    session: Session | None = None  # the child's stored session, once opened
    lines: list[str] = field(default_factory=list)  # its progress, also kept for its result

    @property
    def name(self) -> str:
        return self.agent.name if self.agent is not None else DEFAULT_AGENT

    @property
    def tools(self) -> tuple[str, ...]:
        return self.agent.tools if self.agent is not None else READ_ONLY_TOOLS

    async def line(self, text: str) -> None:
        self.lines.append(text)
        await self.progress(text)

    async def announce(self, label: str | None, prompt: str) -> None:
        self.title = label or _first_line(prompt)
        self.description = _first_line(prompt, 200)
        await self.report(
            SubagentChanged(
                child_id=self.child_id,
                state=SubagentState.RUNNING,
                tool_call_id=self.call_id,
                title=self.title,
                description=self.description,
                agent=self.name,
                cancellable=True,
            )
        )
        await self.line(f"Sub-agent {self.child_id} started: {self.title}\n")

    async def open_session(self, context: ToolContext, now: datetime) -> None:
        """The child's own session: in the parent's directory, naming where it came from."""
        if self.store is None:
            return
        self.session = Session(
            id=self.child_id,
            cwd=context.cwd,
            created_at=now,
            model=self.agent.model
            if self.agent is not None and self.agent.model
            else context.model,
            title=self.title,
            spawn=Spawn(parent_id=self.parent_id, tool_call_id=self.call_id, agent=self.name),
        )
        await self.store.opened(self.session)

    async def keep(self, messages: list[Message], message: Message) -> None:
        """A message of the child's conversation, stored as soon as it exists."""
        messages.append(message)
        if self.store is not None and self.session is not None:
            await self.store.added(self.session, message)

    async def asking(self, permit: ChildPermit, call: ChildCall) -> str | None:
        """The parent's flow decides on the call; while the user is asked, the child's
        state says it waits for them."""
        await self._state(SubagentState.WAITING)
        refusal = await permit(call)  # cancelled with the parent, or the child alone
        await self._state(SubagentState.RUNNING)
        return refusal

    async def _state(self, state: SubagentState) -> None:
        await self.report(
            SubagentChanged(
                child_id=self.child_id, state=state, tool_call_id=self.call_id, cancellable=True
            )
        )

    async def tell_child(self, event: AgentEvent) -> None:
        await self.report(ChildEvent(child_id=self.child_id, event=event))

    async def tool_started(self, use: ToolUseBlock) -> None:
        title = title_for(use.name, use.input)
        await self.tell_child(
            ToolCallStarted(
                tool_call_id=ToolCallId(use.id),
                title=title,
                kind=spec_for(use.name).kind,
                arguments=dict(use.input),
                status=ToolCallStatus.IN_PROGRESS,
                name=use.name,
            )
        )
        await self.line(f"- {title}\n")

    async def tool_ended(self, use: ToolUseBlock, block: ToolResultBlock) -> None:
        status = ToolCallStatus.FAILED if block.is_error else ToolCallStatus.COMPLETED
        shown = block.content if isinstance(block.content, str) else ""
        output = (TextOutput(text=shown[:_SHOWN_RESULT]),) if shown else None
        await self.tell_child(
            ToolCallUpdated(tool_call_id=ToolCallId(use.id), status=status, output=output)
        )
        if self.store is not None:
            record = call_record(use, status, output=output or ())
            await self.store.tool_call(self.child_id, record)

    async def answer(self, message_id: MessageId, text: str) -> None:
        """The child's answer, in the parent's transcript."""
        await self.report(
            SessionMessageSent(
                message_id=message_id, sender=self.child_id, recipient=self.parent_id, text=text
            )
        )

    def record(
        self, state: SubagentState, used: Usage, answer_id: MessageId | None
    ) -> dict[str, object]:
        return subagent_record(
            child_id=self.child_id,
            title=self.title,
            description=self.description,
            agent=self.name,
            state=state,
            used=used,
            answer_id=answer_id,
        )

    async def end(self, state: SubagentState, used: Usage, *, error: str | None = None) -> None:
        await self.report(
            SubagentChanged(
                child_id=self.child_id,
                state=state,
                tool_call_id=self.call_id,
                usage=used,
                error=error,
            )
        )
        await self.line(f"Sub-agent {state.value} ({used.total_tokens} tokens).\n")
