"""Background tasks: commands a session started that keep running after the turn that
started them, each tracked until it exits.

What is kept of one task's output is bounded (`TaskOutput`): a flood costs memory once,
not for as long as it runs. The model reads what came since its last read; the user sees
the last lines."""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from domain.ids import ToolCallId
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus

DEFAULT_MAX_TASKS = 8  # running at once in one session (IAC_CODE_MAX_TASKS)
OUTPUT_KEPT = 64_000  # characters of one task's output kept (its tail)
READ_LIMIT = 16_000  # characters one task_output call hands the model
LAST_LINES = 5  # lines /tasks, _meta.iac_code.tasks and an exit's notice show
LINE_CHARS = 200  # of each of those lines


class TaskState(StrEnum):
    RUNNING = "running"
    EXITED = "exited"


@dataclass(slots=True)
class TaskOutput:
    """A task's output: its last `keep` characters, and how much came in all, so a reader
    that remembers where it stopped gets only what is new (or learns what it missed)."""

    keep: int = OUTPUT_KEPT
    text: str = ""
    total: int = 0  # characters ever added; `text` is the tail ending there

    def add(self, chunk: str) -> None:
        self.total += len(chunk)
        self.text = (self.text + chunk)[-self.keep :]

    def since(self, position: int, limit: int = READ_LIMIT) -> tuple[str, int]:
        """What came after `position` (at most `limit` characters, the newest), and how many
        characters of it are no longer kept or were left out."""
        start = self.total - len(self.text)  # position of text[0]
        new = self.text[max(0, position - start) :]
        missed = max(0, start - position)
        if len(new) > limit:
            missed += len(new) - limit
            new = new[-limit:]
        return new, missed

    def last_lines(self, count: int = LAST_LINES) -> str:
        """The last `count` lines, each cut to its last LINE_CHARS characters (a progress
        bar or a flood without newlines is one long line)."""
        lines = self.text.rstrip("\n").split("\n")[-count:] if self.text else []
        return "\n".join(_line_end(line) for line in lines)


def _line_end(line: str) -> str:
    return line if len(line) <= LINE_CHARS else "…" + line[-(LINE_CHARS - 1) :]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSummary:
    """A task as the user is shown it (`_meta.iac_code.tasks`, /tasks) at one moment."""

    id: str
    command: str
    tool_call_id: ToolCallId
    state: TaskState
    status: str  # in words: "running", "exited with code 1", "killed"
    exit_code: int | None
    started_at: datetime
    ended_at: datetime | None
    last_lines: str


@dataclass(slots=True, kw_only=True)
class BackgroundTask:
    """One background command of a session. Changes only through `exited`."""

    id: str
    command: str
    tool_call_id: ToolCallId
    started_at: datetime
    output: TaskOutput = field(default_factory=TaskOutput)
    state: TaskState = TaskState.RUNNING
    exit_code: int | None = None
    signal: str | None = None
    killed: bool = False  # stopped on request (task_kill, /tasks kill, the session ending)
    ended_at: datetime | None = None
    read_to: int = 0  # where the model's last task_output stopped

    @property
    def running(self) -> bool:
        return self.state is TaskState.RUNNING

    @property
    def succeeded(self) -> bool:
        return self.state is TaskState.EXITED and self.exit_code == 0 and not self.killed

    def exited(self, *, at: datetime, exit_code: int | None, signal: str | None = None) -> None:
        if not self.running:
            return
        self.state = TaskState.EXITED
        self.exit_code = exit_code
        self.signal = signal
        self.ended_at = at

    def runtime(self, now: datetime) -> float:
        """Seconds it ran (so far)."""
        return max(0.0, ((self.ended_at or now) - self.started_at).total_seconds())

    def status_text(self) -> str:
        """How it stands, in words: "running", "exited with code 1", "killed"..."""
        if self.running:
            return "running"
        if self.killed:
            return "killed"
        if self.exit_code is None:
            return f"ended by signal {self.signal}" if self.signal else "ended"
        return f"exited with code {self.exit_code}"

    def summary(self) -> TaskSummary:
        return TaskSummary(
            id=self.id,
            command=self.command,
            tool_call_id=self.tool_call_id,
            state=self.state,
            status=self.status_text(),
            exit_code=self.exit_code,
            started_at=self.started_at,
            ended_at=self.ended_at,
            last_lines=self.output.last_lines(),
        )

    def read_new(self, limit: int = READ_LIMIT) -> str:
        """Output since the model's last read, marked where some was not kept; advances."""
        new, missed = self.output.since(self.read_to, limit)
        self.read_to = self.output.total
        return f"[... {missed} characters not shown ...]\n{new}" if missed else new


SERVER_STOPPED = "The server stopped while this background task ran; it ended with it."


SHOWN_TAIL = 16_000  # characters of a running task's output a load shows


def as_shown_now(record: ToolCallRecord, live: Mapping[str, BackgroundTask]) -> ToolCallRecord:
    """A stored background call as a load shows it: running here, with its output so far
    (the live updates go on from there); stored running but not running here (the server
    stopped or died since, and its tree with it), ended."""
    raw = record.raw_output or {}
    if record.status is not ToolCallStatus.IN_PROGRESS or raw.get("background") is not True:
        return record
    if (task := live.get(record.id)) is not None:
        tail = task.output.text[-SHOWN_TAIL:]
        return replace(record, output=(TextOutput(text=tail),)) if tail else record
    return replace(
        record,
        status=ToolCallStatus.FAILED,
        output=(*record.output, TextOutput(text=SERVER_STOPPED)),
    )


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def one_line(command: str, limit: int = 80) -> str:
    text = " ".join(command.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def task_line(task: BackgroundTask, now: datetime) -> str:
    """e.g. "t1 `npm run dev` running for 2m05s" """
    return (
        f"{task.id} `{one_line(task.command)}` {task.status_text()}, "
        f"{'for' if task.running else 'after'} {_duration(task.runtime(now))}"
    )


def tasks_context(tasks: tuple[BackgroundTask, ...], now: datetime) -> str | None:
    """The session's background tasks as the model is told them with each turn."""
    if not tasks:
        return None
    lines = [task_line(t, now) for t in tasks]
    return "\n".join(
        [
            "<background_tasks>",
            *lines,
            "Read new output with task_output, stop one with task_kill.",
            "</background_tasks>",
        ]
    )
