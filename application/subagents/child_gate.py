"""Whether a sub-agent's call runs: its reads inside the working directory do; what would
be asked about is its parent's to decide, or refused where nobody can be asked."""

from abc import abstractmethod
from typing import Protocol

from application.ports.tools import ChildCall, ChildPermit, ToolPlan
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.subagents.child_run import ChildRun
from application.tools.call_log import ToolCallLog
from application.tools.gate import ToolGate
from application.tools.outcome import Outcome
from domain.events import SubagentState
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.tools import Category, spec_for

# Why a call that would ask is refused to a child nobody can be asked for.
_NEEDS = {True: "it reaches outside the working directory", False: "it needs the user's permission"}
NO_GRANDCHILDREN = "A sub-agent cannot start sub-agents."


class PermissionRoute(Protocol):
    """Where a sub-agent's call that would be asked about is decided."""

    @abstractmethod
    async def decide(
        self, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> str | None:
        """None: the call may run; else why not (what the child's model is told). Raises
        TurnCancelled when the child's turn is cancelled meanwhile."""


class NobodyAsked(PermissionRoute):
    """The researcher's (and a child's whose parent cannot be asked): what would ask is
    refused, saying why."""

    async def decide(self, control: TurnControl, call: ToolCallRecord, plan: ToolPlan) -> str:
        return f"Refused to the sub-agent: {plan.ask_reason or _NEEDS[plan.always_asks]}."


class ParentAsks(PermissionRoute):
    """A named agent's: its parent's permission flow decides, as for the parent's own calls
    (the agent's own mode may narrow its parent's), asking the parent's clients with the
    request naming the child; meanwhile the child's state says it waits for the user."""

    def __init__(self, *, permit: ChildPermit, run: ChildRun) -> None:
        self._permit = permit
        self._run = run

    async def decide(
        self, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> str | None:
        run = self._run
        mode = run.agent.mode if run.agent is not None else None
        child = ChildCall(call=call, plan=plan, child_id=run.child_id, agent=run.name, mode=mode)
        await run.state(SubagentState.WAITING)
        refusal = await control.guard(self._permit(child))
        await run.state(SubagentState.RUNNING)
        return refusal


class ChildGate(ToolGate):
    """A sub-agent's calls: reads inside the working directory run unasked; anything else
    goes its route (PermissionRoute). A request cancelled with the child's turn leaves the
    call unrun."""

    def __init__(self, *, calls: ToolCallLog, route: PermissionRoute) -> None:
        self._calls = calls
        self._route = route

    async def admit(
        self, session: Session, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> Outcome | ToolCallRecord:
        if not plan.always_asks and spec_for(call.name).category is Category.READ:
            return call
        try:
            refusal = await self._route.decide(control, call, plan)
        except TurnCancelled:
            return Outcome(result=await self._calls.not_run(session, call))
        if refusal is None:
            return call
        return Outcome(result=await self._calls.fail(session, call, refusal))

    def child_permit(self, session: Session, control: TurnControl) -> ChildPermit:
        return _no_grandchildren


async def _no_grandchildren(_: ChildCall) -> str:
    return NO_GRANDCHILDREN
