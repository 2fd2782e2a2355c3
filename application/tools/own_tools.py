"""The tools a session's turn runs itself rather than through the runner: the plan
(`todo_write`), the user's answer (`ask_user`), background tasks (`bash` with
`run_in_background`, `task_output`, `task_kill`)."""

from abc import abstractmethod
from typing import Protocol

from application.ports.tools import ToolResult
from application.ports.workspace import Workspace, Workspaces
from application.runtime.turn_control import TurnControl
from application.tasks.background_tasks import BackgroundTasks, TaskLimitReached
from application.tasks.task_tools import TaskTools, started_text
from application.tools.ask_user import AskUser
from application.tools.call_log import ToolCallLog
from application.tools.plan_tool import plan_written
from application.tools.sandbox_waivers import SandboxWaivers
from application.tools.session_workspace import session_workspace
from domain.config import Catalog
from domain.content import ToolResultBlock
from domain.events import PlanUpdated, ToolCallUpdated
from domain.plan import TODO_WRITE, read_plan
from domain.questions import ASK_USER
from domain.session import Session
from domain.tool_call import ToolCallRecord, ToolCallStatus
from domain.tools import TASK_KILL, TASK_OUTPUT


class OwnTools(Protocol):
    """Runs a call that is one of the turn's own tools, start to end (shown, finished,
    recorded); any other call is left to the runner."""

    @abstractmethod
    async def run(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock | None:
        """The call's result; None: not one of these, the runner runs it."""


class SessionOwnTools(OwnTools):
    """A session's own tools.

    - `todo_write` completes at once and sends the whole plan (PlanUpdated); `ask_user`
      asks the user (AskUser).
    - `bash` with `run_in_background` starts a background task (BackgroundTasks): the model
      is answered at once, and the call stays in progress until the command exits.
      `task_output` and `task_kill` run here too.
    """

    def __init__(
        self,
        *,
        calls: ToolCallLog,
        ask_user: AskUser,
        tasks: BackgroundTasks,
        workspaces: Workspaces,
        catalog: Catalog,
        waivers: SandboxWaivers,
    ) -> None:
        self._catalog = catalog
        self._waivers = waivers
        self._calls = calls
        self._ask_user = ask_user
        self._tasks = tasks
        self._workspaces = workspaces

    async def run(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock | None:
        if call.name == TODO_WRITE:
            return await self._write_plan(session, call)
        if call.name == ASK_USER:
            return await self._ask_user.run(session, control, call)
        if call.name in (TASK_OUTPUT, TASK_KILL):
            return await self._task_tool(session, call)
        if call.name == "bash" and call.arguments.get("run_in_background") is True:
            return await self._background(session, call)
        return None

    async def _write_plan(self, session: Session, call: ToolCallRecord) -> ToolResultBlock:
        """The model's plan, checked when the call was looked at: the call completes, then
        the client gets the whole plan (the order a load replays it in)."""
        entries = read_plan(call.arguments)
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        result = ToolResult(text=plan_written(entries))
        block = await self._calls.finish(session, call, ToolCallStatus.COMPLETED, result)
        await self._calls.emit(session, PlanUpdated(entries=entries))
        return block

    async def _background(self, session: Session, call: ToolCallRecord) -> ToolResultBlock:
        """Start the command as a background task; its call ends when it exits."""
        workspace = self._workspace(session, waived=self._waivers.take(call.id))
        try:
            command = str(call.arguments["command"])
            task = await self._tasks.launch(session, call, workspace, command)
        except TaskLimitReached as exc:
            return await self._calls.fail(session, call, str(exc))
        return ToolResultBlock(tool_use_id=call.id, content=started_text(task))

    async def _task_tool(self, session: Session, call: ToolCallRecord) -> ToolResultBlock:
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        result = await TaskTools(self._tasks).run(session.id, call.name, call.arguments)
        status = ToolCallStatus.FAILED if result.is_error else ToolCallStatus.COMPLETED
        return await self._calls.finish(session, call, status, result)

    def _workspace(self, session: Session, *, waived: bool = False) -> Workspace:
        """Where the session's commands run: this machine, or the editor's terminals."""
        return session_workspace(self._workspaces, self._catalog, session, waived=waived)
