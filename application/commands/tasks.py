"""/tasks: the session's background tasks, for the user (and `/tasks kill <id>`)."""

from application.ports.clock import Clock
from application.runtime.command_registry import CommandInput
from application.tasks.background_tasks import BackgroundTasks
from domain.commands import CommandSpec
from domain.tasks import task_line

USAGE = "Usage: `/tasks` lists the background tasks, `/tasks kill <id>` stops one."


class TasksCommand:
    spec = CommandSpec(
        name="tasks",
        description="List the background tasks (status, last lines); `kill <id>` stops one",
        hint="kill <id>",
    )

    def __init__(self, *, tasks: BackgroundTasks, clock: Clock) -> None:
        self._tasks = tasks
        self._clock = clock

    async def run(self, command: CommandInput) -> str:
        words = command.argument.split()
        session_id = command.session.id
        if not words:
            return self._listing(session_id)
        if words[0] == "kill" and len(words) == 2:
            return await self._kill(session_id, words[1])
        return USAGE

    def _listing(self, session_id: str) -> str:
        tasks = self._tasks.of(session_id)
        if not tasks:
            return "No background tasks in this session."
        now = self._clock.now()
        lines = ["Background tasks:"]
        for task in tasks:
            lines.append(f"- {task_line(task, now)}")
            if last := task.output.last_lines():
                lines.append("\n".join(f"    {line}" for line in last.split("\n")))
        return "\n".join(lines)

    async def _kill(self, session_id: str, task_id: str) -> str:
        task = self._tasks.find(session_id, task_id)
        if task is None:
            known = ", ".join(t.id for t in self._tasks.of(session_id)) or "none"
            return f"No background task {task_id!r} in this session (its tasks: {known})."
        if not task.running:
            return f"Task {task.id} had already {task.status_text()}."
        await self._tasks.kill(session_id, task.id)
        return f"Task {task.id} (`{task.command}`) was stopped."
