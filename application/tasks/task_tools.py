"""The model's tools for its background tasks: `task_output` and `task_kill`. Ours, like
todo_write: they read and stop what the session itself started, so they never ask."""

from collections.abc import Mapping

from application.ports.tools import ToolDefinition, ToolPlan, ToolResult
from application.tasks.background_tasks import BackgroundTasks
from domain.tasks import BackgroundTask
from domain.tools import TASK_KILL, TASK_OUTPUT

_ID = {"type": "string", "description": "The task's id, e.g. t1 (given when it started)."}

TASK_OUTPUT_TOOL = ToolDefinition(
    name=TASK_OUTPUT,
    description=(
        "Read a background task's output: what it printed since your last read (bounded), "
        "and whether it still runs or how it ended. `tail` keeps only that many last lines."
    ),
    input_schema={
        "type": "object",
        "properties": {"id": _ID, "tail": {"type": "integer", "minimum": 1}},
        "required": ["id"],
        "additionalProperties": False,
    },
)
TASK_KILL_TOOL = ToolDefinition(
    name=TASK_KILL,
    description="Stop a background task (its whole process tree).",
    input_schema={
        "type": "object",
        "properties": {"id": _ID},
        "required": ["id"],
        "additionalProperties": False,
    },
)
TASK_TOOLS = (TASK_OUTPUT_TOOL, TASK_KILL_TOOL)


def check_task_call(arguments: Mapping[str, object]) -> ToolPlan:
    """The input looked at before the call runs: a bad one fails without running."""
    task_id = arguments.get("id")
    if not isinstance(task_id, str) or not task_id.strip():
        return ToolPlan(problem="`id` must be a task id such as t1.")
    tail = arguments.get("tail")
    if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 1):
        return ToolPlan(problem="`tail` must be a positive integer.")
    return ToolPlan()


class TaskTools:
    def __init__(self, tasks: BackgroundTasks) -> None:
        self._tasks = tasks

    async def run(self, session_id: str, name: str, arguments: Mapping[str, object]) -> ToolResult:
        task_id = str(arguments.get("id", "")).strip()
        task = self._tasks.find(session_id, task_id)
        if task is None:
            return ToolResult(text=self._unknown(session_id, task_id), is_error=True)
        if name == TASK_KILL:
            return await self._kill(session_id, task)
        tail = arguments.get("tail")
        return self._read(task, tail if isinstance(tail, int) else None)

    def _unknown(self, session_id: str, task_id: str) -> str:
        known = ", ".join(t.id for t in self._tasks.of(session_id)) or "none"
        return f"There is no background task {task_id!r} in this session (its tasks: {known})."

    @staticmethod
    def _read(task: BackgroundTask, tail: int | None) -> ToolResult:
        new = task.read_new()
        if tail is not None and new:
            new = "\n".join(new.rstrip("\n").split("\n")[-tail:])
        body = new.rstrip("\n") or "(no new output)"
        return ToolResult(text=f"{body}\n\nTask {task.id} (`{task.command}`) {task.status_text()}.")

    async def _kill(self, session_id: str, task: BackgroundTask) -> ToolResult:
        if not task.running:
            return ToolResult(text=f"Task {task.id} had already {task.status_text()}.")
        await self._tasks.kill(session_id, task.id)
        return ToolResult(text=f"Task {task.id} was stopped.")


def started_text(task: BackgroundTask) -> str:
    """What the model is told when its background command starts."""
    return (
        f"Started in the background as task {task.id}. It keeps running after this turn; "
        f"read its output with task_output (id {task.id}), stop it with task_kill. Its call "
        "ends when the command exits; later turns list it in <background_tasks>."
    )
