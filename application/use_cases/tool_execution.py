"""Running an allowed tool call: its live output shown, its result recorded."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from application.ports.tools import ChildPermit, ToolResult
from application.runtime import SessionRegistry, TurnCancelled, TurnControl
from application.use_cases.ask_user import AskUser
from application.use_cases.background_tasks import BackgroundTasks, TaskLimitReached
from application.use_cases.briefing import Briefer
from application.use_cases.file_checkpoints import FileCheckpoints
from application.use_cases.plan_tool import plan_written
from application.use_cases.task_tools import TaskTools, started_text
from application.use_cases.tool_call_log import ToolCallLog
from application.use_cases.tool_catalogue import ToolCatalogue
from domain.content import ToolResultBlock
from domain.events import PlanUpdated, ToolCallUpdated
from domain.plan import TODO_WRITE, read_plan
from domain.questions import ASK_USER
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolOutput
from domain.tools import TASK_KILL, TASK_OUTPUT
from domain.usage import Usage

CANCELLED = "Cancelled by the user before the tool finished; its result was discarded."
# Tools whose paths bring a subdirectory's instructions (AGENTS.md) into the context.
WORKS_IN_DIRECTORIES = frozenset({"read_file", "write_file", "edit_file", "list_files"})
# Tools that change the files they name: the files' prior states are checkpointed first.
CHANGES_FILES = frozenset({"write_file", "edit_file"})
PROGRESS_TAIL = 16_000  # characters of live output re-sent with each progress update


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one call came to: the result the model gets, and what the tool's own model
    requests used (a sub-agent's), which the turn pays for too."""

    result: ToolResultBlock
    spent: Usage = field(default_factory=Usage)


class ToolExecution:
    """Runs a call the session allowed, through the tool it names.

    - The call is in progress while it runs; its output is streamed as it comes (the last
      PROGRESS_TAIL characters), or shown at once when the tool shows something itself.
    - Cancelling the turn stops the tool; its result is discarded.
    - A file tool working in a subdirectory brings that directory's instructions with its
      result, the first time.
    - `todo_write` runs here: it completes at once and sends the whole plan (PlanUpdated);
      `ask_user` asks the user (AskUser).
    - Before `write_file`/`edit_file` first changes a file in a turn, its prior state is
      checkpointed (FileCheckpoints), and after, the state the agent left it in; a `bash`
      command's changes in the session's directories are found by comparing scans.
    - `bash` with `run_in_background` starts a background task (BackgroundTasks): the model
      is answered at once, and the call stays in progress until the command exits.
      `task_output` and `task_kill` run here too.
    """

    def __init__(
        self,
        *,
        catalogue: ToolCatalogue,
        calls: ToolCallLog,
        registry: SessionRegistry | None = None,
        briefer: Briefer | None = None,
        ask_user: AskUser | None = None,
        tasks: BackgroundTasks | None = None,
        checkpoints: FileCheckpoints | None = None,
    ) -> None:
        self._catalogue = catalogue
        self._calls = calls
        self._registry = registry
        self._briefer = briefer
        self._ask_user = ask_user
        self._tasks = tasks
        self._checkpoints = checkpoints

    async def run(
        self,
        session: Session,
        control: TurnControl,
        call: ToolCallRecord,
        permit: ChildPermit | None = None,  # how a sub-agent's calls are asked about
    ) -> Outcome:
        if call.name == TODO_WRITE:
            return Outcome(result=await self._write_plan(session, call))
        if call.name == ASK_USER and self._ask_user is not None:
            return Outcome(result=await self._ask_user.run(session, control, call))
        if self._tasks is not None:
            if call.name in (TASK_OUTPUT, TASK_KILL):
                return Outcome(result=await self._task_tool(session, call, self._tasks))
            if call.name == "bash" and call.arguments.get("run_in_background") is True:
                return Outcome(result=await self._background(session, call, self._tasks))
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        tail = ""

        async def progress(chunk: str | ToolOutput) -> None:
            nonlocal tail
            if not isinstance(chunk, str):  # e.g. the editor's terminal, shown at once
                await self._calls.emit(
                    session, ToolCallUpdated(tool_call_id=call.id, output=(chunk,))
                )
                return
            tail = (tail + chunk)[-PROGRESS_TAIL:]  # bounded: cost stays flat as output grows
            await self._calls.emit(
                session, ToolCallUpdated(tool_call_id=call.id, output=(TextOutput(text=tail),))
            )

        changed = await self._checkpointing(session, call)
        try:
            result = await control.guard(self._catalogue.run(session, call, progress, permit))
        except TurnCancelled:
            await changed()  # what the agent left, even when cancelled
            cancelled = ToolResult(text=CANCELLED, is_error=True)
            block = await self._calls.finish(session, call, ToolCallStatus.CANCELLED, cancelled)
            return Outcome(result=block)
        await changed()
        status = ToolCallStatus.FAILED if result.is_error else ToolCallStatus.COMPLETED
        if not result.is_error and call.name in WORKS_IN_DIRECTORIES:
            result = replace(result, text=result.text + await self._nested(session, call))
        block = await self._calls.finish(session, call, status, result)
        return Outcome(result=block, spent=result.usage)

    async def _checkpointing(
        self, session: Session, call: ToolCallRecord
    ) -> Callable[[], Awaitable[None]]:
        """Checkpoint what the call is about to change; what to call once it ran."""
        checkpoints = self._checkpoints
        if checkpoints is not None and call.name in CHANGES_FILES:
            await checkpoints.before(session, call.locations)
            return lambda: checkpoints.after(session, call.locations)
        if checkpoints is not None and call.name == "bash":
            watch = await checkpoints.before_command(session)
            return lambda: checkpoints.after_command(session, watch)
        return _nothing

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

    async def _background(
        self, session: Session, call: ToolCallRecord, tasks: BackgroundTasks
    ) -> ToolResultBlock:
        """Start the command as a background task; its call ends when it exits."""
        workspace = self._catalogue.workspace(session)
        if workspace is None:
            return await self._calls.fail(session, call, "Background commands cannot run here.")
        try:
            task = await tasks.launch(session, call, workspace, str(call.arguments["command"]))
        except TaskLimitReached as exc:
            return await self._calls.fail(session, call, str(exc))
        return ToolResultBlock(tool_use_id=call.id, content=started_text(task))

    async def _task_tool(
        self, session: Session, call: ToolCallRecord, tasks: BackgroundTasks
    ) -> ToolResultBlock:
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        result = await TaskTools(tasks).run(session.id, call.name, call.arguments)
        status = ToolCallStatus.FAILED if result.is_error else ToolCallStatus.COMPLETED
        return await self._calls.finish(session, call, status, result)

    async def _nested(self, session: Session, call: ToolCallRecord) -> str:
        """A subdirectory's instructions, the first time the agent works there."""
        active = self._registry.find(session.id) if self._registry is not None else None
        if self._briefer is None or active is None:
            return ""
        return await self._briefer.nested(active, call.locations)


async def _nothing() -> None:
    return None
