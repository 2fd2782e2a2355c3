"""Whether a call that was shown and looked at runs: the gate a turn's calls pass."""

from abc import abstractmethod
from typing import Protocol

from application.ports.tools import ChildCall, ChildPermit, ToolPlan
from application.runtime.turn_control import TurnControl
from application.tools.call_log import ToolCallLog
from application.tools.outcome import Outcome
from application.tools.permissions import PermissionFlow
from application.tools.plan_exit import PlanExit
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.tools import EXIT_PLAN_MODE


class ToolGate(Protocol):
    """Decides on one call of a turn that is not cancelled and whose input can work."""

    @abstractmethod
    async def admit(
        self, session: Session, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> Outcome | ToolCallRecord:
        """The call to run, or what it came to instead (refused, or settled here). A gate
        that ends the turn sets `control.cancelled`."""

    @abstractmethod
    def child_permit(self, session: Session, control: TurnControl) -> ChildPermit:
        """How a sub-agent started by this turn's calls asks about its own calls."""


class SessionGate(ToolGate):
    """A session's own calls: `exit_plan_mode` asks to leave plan mode (PlanExit); every
    other call is decided by the session's permission flow, and a request the user
    cancelled ends the turn."""

    def __init__(
        self, *, permissions: PermissionFlow, plan_exit: PlanExit, calls: ToolCallLog
    ) -> None:
        self._permissions = permissions
        self._plan_exit = plan_exit
        self._calls = calls

    async def admit(
        self, session: Session, control: TurnControl, call: ToolCallRecord, plan: ToolPlan
    ) -> Outcome | ToolCallRecord:
        if call.name == EXIT_PLAN_MODE:
            return Outcome(result=await self._plan_exit.run(session, control, call))
        answer = await self._permissions.permit(session, control, call, plan)
        if answer.cancel_turn:
            control.cancelled.set()
            return Outcome(result=await self._calls.not_run(session, call))
        if not answer.allowed:
            return Outcome(result=await self._calls.fail(session, call, answer.refusal))
        return call

    def child_permit(self, session: Session, control: TurnControl) -> ChildPermit:
        """Through this session's permission flow, as its own calls are decided."""

        async def permit(child: ChildCall) -> str | None:
            return await self._permissions.permit_child(session, control, child)

        return permit
