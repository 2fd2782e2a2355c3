"""The `agent` tool: a sub-agent's turn on the agent loop, for one task of its parent's."""

import asyncio
from collections.abc import Mapping
from dataclasses import replace

from application.agent_loop.model_turn import ModelTurn
from application.agent_loop.prepared import PreparedPrompt
from application.dto import PromptResult
from application.errors import ModelError
from application.history.subagent_record import KEY
from application.knowledge.named_agents import chosen_agent
from application.knowledge.system_prompt import environment_context
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.runtime.subagent_runs import SubagentRuns
from application.runtime.turn_control import TurnControl
from application.subagents.child_run import ChildRun
from application.subagents.child_seat import child_seat
from application.subagents.child_sessions import ChildSessions
from application.subagents.child_turns import ChildTurns
from domain.content import TextBlock
from domain.events import SessionMessageSent, SubagentState
from domain.ids import SessionId, ToolCallId
from domain.message import Role
from domain.session import Session
from domain.stop_reason import StopReason
from domain.tool_call import TextOutput

STOPPED_ALONE = "The user cancelled this sub-agent before it answered."

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
    """Adds the `agent` tool to a runner: each call runs a child's turn (ChildTurns), with
    its own tools, prompt and model, stored as a session of its own and shown on its
    parent (ChildRun).

    - The researcher's read-only tools run without asking, but only inside the working
      directory; anything else is refused to it. A named agent's calls that would ask are
      decided by its parent's permission flow (the context's `permit`).
    - Its model errors, and its running out of requests, become an error result.
    - A client may cancel the child alone: its turn ends cancelled and the parent gets an
      error result and goes on. Cancelling the parent's turn cancels the child's too.
    """

    def __init__(
        self,
        *,
        inner: ToolRunner,
        turns: ChildTurns,
        children: ChildSessions,
        runs: SubagentRuns,  # where a client can cancel a child alone
        clock: Clock,
        ids: IdGenerator,
    ) -> None:
        self._inner = inner
        self._turns = turns
        self._children = children
        self._runs = runs
        self._clock = clock
        self._ids = ids

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
        run = ChildRun(
            agent=chosen,
            child_id=self._ids.session_id(),
            parent_id=SessionId(context.session_id),
            call_id=ToolCallId(context.call_id or ""),
            report=context.report,
            progress=progress,
        )
        prompt = str(arguments["prompt"])
        child = await self._start(run, context, prompt, arguments.get("description"))
        turn = self._turns.turn(child_seat(self._inner, context, run))
        return await self._ended(
            run, await self._followed(turn, run, child, _task(context, prompt))
        )

    async def _start(
        self, run: ChildRun, context: ToolContext, prompt: str, label: object
    ) -> Session:
        """The child announced on its parent, its session opened, its task told."""
        await run.announce(label if isinstance(label, str) and label.strip() else None, prompt)
        child = await self._children.open(run, context, self._clock.now())
        await run.tell_child(  # the task, as the child's transcript starts
            SessionMessageSent(
                message_id=self._ids.message_id(),
                sender=run.parent_id,
                recipient=run.child_id,
                text=prompt,
            )
        )
        return child

    async def _ended(self, run: ChildRun, result: ToolResult) -> ToolResult:
        """How the run ended, told to the parent's clients and kept with the call."""
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

    async def _followed(
        self, turn: ModelTurn, run: ChildRun, child: Session, task: PreparedPrompt
    ) -> ToolResult:
        """The child's turn as a task of its own, with a control of its own: a client may
        cancel it alone, and cancelling the parent's turn cancels it too, in both cases
        through its control, so that it ends as a cancelled turn does (what was shown of
        a reply kept, every tool use answered)."""
        control = TurnControl()
        work = asyncio.ensure_future(self._converse(turn, child, control, task))

        def stop() -> None:
            run.stopped_alone = True
            control.cancelled.set()

        self._runs.started(run.child_id, run.parent_id, stop)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:  # the parent's turn was cancelled
            control.cancelled.set()
            await asyncio.gather(work, return_exceptions=True)
            await run.end(SubagentState.CANCELLED, child.spent)
            raise
        finally:
            self._runs.ended(run.child_id)

    async def _converse(
        self, turn: ModelTurn, child: Session, control: TurnControl, task: PreparedPrompt
    ) -> ToolResult:
        try:
            ended = await turn.run(child, control, task)
        except ModelError as exc:
            return ToolResult(
                text=f"The sub-agent's model request failed: {exc}",
                is_error=True,
                usage=child.spent,
            )
        return self._result(ended, child)

    def _result(self, ended: PromptResult, child: Session) -> ToolResult:
        """What the parent's model gets: the child's last answer, or why there is none."""
        if ended.stop_reason is StopReason.CANCELLED:
            return ToolResult(text=STOPPED_ALONE, is_error=True, usage=child.spent)
        if ended.stop_reason is StopReason.MAX_TURN_REQUESTS:
            limit = self._turns.limits.max_turn_requests
            return ToolResult(
                text=f"The sub-agent stopped after {limit} model requests without a final answer.",
                is_error=True,
                usage=child.spent,
            )
        said = _answer(child)
        replies = sum(1 for message in child.messages if message.role is Role.ASSISTANT)
        return ToolResult(
            text=said or "(the sub-agent gave no answer)",
            raw_output={"answer": said, "requests": replies},
            usage=child.spent,
        )


def _answer(child: Session) -> str:
    """What the child said last, when its last message is its own (not a tool's results)."""
    last = child.messages[-1] if child.messages else None
    if last is None or last.role is not Role.ASSISTANT:
        return ""
    return last.visible_text().strip()


def _task(context: ToolContext, prompt: str) -> PreparedPrompt:
    """The task, with the same environment the calling turn was told."""
    environment = context.briefing.environment
    return PreparedPrompt(
        content=(TextBlock(text=prompt),),
        context=environment_context(environment) if environment else None,
    )
