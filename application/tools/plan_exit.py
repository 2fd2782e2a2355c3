"""Leaving plan mode: the model presents its plan (`exit_plan_mode`), the user picks how
the session goes on."""

from dataclasses import replace

from application.ports.permissions import PermissionRequest, PermissionUnavailable
from application.ports.tools import ToolResult
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.sessions.settings import ChangeSettings
from application.tools.call_log import ToolCallLog
from application.tools.permission_desk import PermissionDesk
from domain.config import Catalog
from domain.content import ToolResultBlock
from domain.modes import ModeId
from domain.permission import Decider, PermissionOption
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus

# The three answers, each an ACP option kind, and the mode it picks.
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


class PlanExit:
    """Runs `exit_plan_mode`: the user is shown the plan and asked which mode comes next.

    - Approved, the session changes mode (accept-edits or default) and the model is told
      to carry the plan out; rejected, or unanswered in time, it keeps planning.
    - The user cancelling the request ends the turn.
    """

    def __init__(
        self,
        *,
        desk: PermissionDesk,
        settings: ChangeSettings,
        catalog: Catalog,
        calls: ToolCallLog,
    ) -> None:
        self._desk = desk
        self._settings = settings
        self._catalog = catalog
        self._calls = calls

    async def run(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock:
        text = call.arguments.get("plan")
        if self._catalog.usable_mode(session.mode_id) != ModeId.PLAN:
            return await self._calls.fail(session, call, "Not in plan mode: go on with the task.")
        if not isinstance(text, str) or not text.strip():
            return await self._calls.fail(
                session, call, "exit_plan_mode needs the plan, as markdown, in `plan`."
            )
        chosen = await self._choice(session, control, call, text)
        await self._desk.record(session, call, chosen, Decider.USER)
        if chosen is None:
            control.cancelled.set()
            return await self._calls.not_run(session, call)
        next_mode = LEAVE_PLAN_MODES.get(chosen)
        if next_mode is None:
            result = ToolResult(text=KEEP_PLANNING)
        else:
            await self._settings.mode(session, next_mode)
            result = ToolResult(text=f"The user approved the plan. {LEFT_PLAN[next_mode]}")
        output = (TextOutput(text=text),)
        return await self._calls.finish(
            session, call, ToolCallStatus.COMPLETED, replace(result, output=output)
        )

    async def _choice(
        self, session: Session, control: TurnControl, call: ToolCallRecord, plan: str
    ) -> PermissionOption | None:
        """The user's answer; None when the turn or the request was cancelled."""
        request = PermissionRequest(
            tool_call_id=call.id,
            tool_name=call.name,
            title=call.title,
            kind=call.kind,
            arguments=call.arguments,
            locations=(),
            preview=(TextOutput(text=plan),),
            options=LEAVE_PLAN_OPTIONS,
            names=LEAVE_PLAN_NAMES,
            ids=LEAVE_PLAN_IDS,
        )
        try:
            return await self._desk.ask(session, control, request)
        except TurnCancelled:
            return None
        except (TimeoutError, PermissionUnavailable):
            return PermissionOption.REJECT_ONCE  # nobody approved: keep planning
