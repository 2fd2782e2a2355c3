"""The tool uses of one assistant message, each shown, decided on, then run or refused."""

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

from application.ports.tools import ToolPlan
from application.ports.tracing import Tracer
from application.runtime.turn_control import TurnControl
from application.tools.call_log import NOT_RUN, ToolCallLog
from application.tools.execution import ToolExecution
from application.tools.gate import ToolGate
from application.tools.outcome import Outcome
from application.tools.toolbox import Toolbox
from domain.content import ToolResultBlock, ToolUseBlock
from domain.session import Session
from domain.tool_call import ToolCallRecord, ToolCallStatus
from domain.tools import call_record
from domain.usage import Usage

AGENT = "agent"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRound:
    """What the tool uses of one message came to: a result for each, in order, and what
    the tools' own model requests used (the turn pays for them too)."""

    results: tuple[ToolResultBlock, ...]
    spent: Usage = field(default_factory=Usage)


DEFAULT_MAX_SUBAGENTS = 3


def _too_many(limit: int) -> str:
    return (
        f"At most {limit} sub-agents run at once; this one was not started. "
        "Start it after the others have answered."
    )


async def _all_or_none(runs: list[Coroutine[Any, Any, Outcome]]) -> list[Outcome]:
    """Every run's outcome; when one fails unexpectedly (the store, say), the others are
    stopped before the failure goes on, rather than left running unawaited."""
    tasks = [asyncio.ensure_future(run) for run in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _batches(uses: tuple[ToolUseBlock, ...]) -> list[tuple[ToolUseBlock, ...]]:
    """The uses in order, consecutive `agent` calls together (they run at once), every
    other call on its own."""
    batches: list[list[ToolUseBlock]] = []
    for use in uses:
        if use.name == AGENT and batches and batches[-1][-1].name == AGENT:
            batches[-1].append(use)
        else:
            batches.append([use])
    return [tuple(batch) for batch in batches]


class ToolPhase:
    """Runs the tool uses of one assistant message, in the order given.

    - Each call is shown (`tool_call`, pending) before anything happens to it, as the
      turn's tools look at it (Toolbox).
    - The turn's gate decides (a session's: its rules, or leaving plan mode; a
      sub-agent's: its own); a refused call does not run: the model is told why and the
      turn goes on. Every allowed call runs (ToolExecution).
    - Consecutive `agent` calls (sub-agents) are shown and decided one by one, then run
      at once, at most `max_subagents` of them (the rest get an error result); the phase
      waits for all of them. Cancelling the turn cancels every one.
    - The client cancelling the permission request, or the turn being cancelled, ends the
      turn: the running tool is stopped and every tool use still gets a result, so the
      history stays acceptable to the provider.
    """

    def __init__(
        self,
        *,
        tools: Toolbox,
        calls: ToolCallLog,
        gate: ToolGate,
        execution: ToolExecution,
        tracer: Tracer,
        max_subagents: int = DEFAULT_MAX_SUBAGENTS,
    ) -> None:
        self._tools = tools
        self._calls = calls
        self._gate = gate
        self._execution = execution
        self._tracer = tracer
        self._max_subagents = max_subagents

    async def run(
        self,
        session: Session,
        control: TurnControl,
        uses: tuple[ToolUseBlock, ...],
        *,
        refusal: str | None = None,
    ) -> ToolRound:
        """Results for every use, in order. With `refusal`, each call is shown and answered
        with it, and none runs. Calls shown early that did not come are settled."""
        results: list[ToolResultBlock] = []
        spent = Usage()
        for batch in _batches(uses):
            if control.cancelled.is_set():
                results.extend(
                    ToolResultBlock(tool_use_id=use.id, content=NOT_RUN, is_error=True)
                    for use in batch
                )
                continue
            for outcome in await self._batch(session, control, batch, refusal):
                results.append(outcome.result)
                spent = spent + outcome.spent
        await self._calls.settle_announced(session, control)
        return ToolRound(results=tuple(results), spent=spent)

    async def _batch(
        self,
        session: Session,
        control: TurnControl,
        batch: tuple[ToolUseBlock, ...],
        refusal: str | None,
    ) -> list[Outcome]:
        """One call on its own; sub-agents started together (up to `max_subagents`) run at
        once, each shown and decided first, in order. The turn waits for all of them."""
        if len(batch) == 1:
            return [await self._traced(session, control, batch[0], refusal)]
        admitted: list[Outcome | ToolCallRecord] = []
        for index, use in enumerate(batch):
            over = None if index < self._max_subagents else _too_many(self._max_subagents)
            admitted.append(await self._admit(session, control, use, refusal or over))
        runs = [
            self._executed(session, control, item)
            for item in admitted
            if isinstance(item, ToolCallRecord)
        ]
        done = iter(await _all_or_none(runs))
        return [item if isinstance(item, Outcome) else next(done) for item in admitted]

    async def _traced(
        self, session: Session, control: TurnControl, use: ToolUseBlock, refusal: str | None
    ) -> Outcome:
        attributes = {
            "session.id": session.id,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": use.name,
            "gen_ai.tool.call.id": use.id,
        }
        with self._tracer.span(f"execute_tool {use.name}", attributes) as span:
            outcome = await self._one(session, control, use, refusal)
            span.set("iac_code.tool.is_error", outcome.result.is_error)
            return outcome

    async def _one(
        self, session: Session, control: TurnControl, use: ToolUseBlock, refusal: str | None
    ) -> Outcome:
        admitted = await self._admit(session, control, use, refusal)
        if isinstance(admitted, Outcome):
            return admitted
        permit = self._gate.child_permit(session, control)
        return await self._execution.run(session, control, admitted, permit)

    async def _executed(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> Outcome:
        attributes = {
            "session.id": session.id,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
        }
        with self._tracer.span(f"execute_tool {call.name}", attributes) as span:
            permit = self._gate.child_permit(session, control)
            outcome = await self._execution.run(session, control, call, permit)
            span.set("iac_code.tool.is_error", outcome.result.is_error)
            return outcome

    async def _admit(
        self, session: Session, control: TurnControl, use: ToolUseBlock, refusal: str | None
    ) -> Outcome | ToolCallRecord:
        """The call shown and decided on: the call to run, or what it came to instead."""
        call, plan = await self._shown(session, control, use)
        if problem := refusal or plan.problem:
            return Outcome(result=await self._calls.fail(session, call, problem))
        if control.cancelled.is_set():  # an earlier one of a batch ended the turn
            return Outcome(result=await self._calls.not_run(session, call))
        return await self._gate.admit(session, control, call, plan)

    async def _shown(
        self, session: Session, control: TurnControl, use: ToolUseBlock
    ) -> tuple[ToolCallRecord, ToolPlan]:
        """The call as the tool it names sees it, shown to the client."""
        call = call_record(use, ToolCallStatus.PENDING)
        plan = await self._tools.look(session, use)
        call = replace(call, locations=plan.locations, title=plan.title or call.title)
        await self._calls.show(session, control, call)
        return call, plan
