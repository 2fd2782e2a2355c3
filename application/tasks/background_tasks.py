"""Background tasks: `bash` with `run_in_background`, tracked from launch to exit.

A task belongs to its session, not to the turn or the client that started it: the turn
goes on at once, and the task's tool call stays `in_progress` until the command exits,
then ends `completed` (exit code 0) or `failed`, with its exit status and the tail of its
output, for every client attached then. It survives a client leaving (and the session
dropping out of memory meanwhile) and is killed, its whole process tree, when the session
is closed by its last client, deleted, or the server stops; the server dying kills it too
(the launcher's watch pipe: adapters/workspace/processes.py).
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from application.notices.session_notices import SessionNotices, Severity
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.ports.workspace import CommandRun, Workspace
from application.runtime.registry import SessionRegistry
from domain.events import TasksChanged, ToolCallUpdated
from domain.ids import SessionId
from domain.session import Session
from domain.tasks import DEFAULT_MAX_TASKS, LAST_LINES, BackgroundTask, one_line
from domain.tool_call import (
    TerminalOutput,
    TextOutput,
    ToolCallRecord,
    ToolCallStatus,
    ToolOutput,
)

log = logging.getLogger(__name__)

# A background command is not timed out: it runs until it exits or is stopped. This only
# keeps a forgotten one from running for ever.
RUN_SECONDS = 7 * 86_400.0
OUTPUT_LIMIT = 30_000  # what the workspace keeps of its output (we keep our own tail too)
PROGRESS_TAIL = 16_000  # characters of live output each progress update shows
PROGRESS_EVERY = 0.25  # seconds between progress updates of one task: a flood is coalesced
STOP_BOUND = 40.0  # a stopped task's tree is gone within the launcher's grace and bound
KEEP_EXITED = 16  # exited tasks still listed per session (the oldest go first)


# Told of a task that ended while its session was idle: (session id, what to tell the model).
FollowUp = Callable[[str, str], Awaitable[None]]


class TaskLimitReached(Exception):
    """The session already runs its maximum of background tasks."""


@dataclass(slots=True, kw_only=True)
class _Entry:
    session_id: SessionId
    task: BackgroundTask
    call: ToolCallRecord
    runner: "asyncio.Task[CommandRun] | None" = None
    follower: "asyncio.Task[None] | None" = None
    silent: bool = False  # its session is deleted: nothing more is shown or stored
    terminal: str | None = None  # the editor's terminal it runs in, where delegated
    flushing: "asyncio.Task[None] | None" = None


class BackgroundTasks:
    """Every session's background tasks in this process."""

    def __init__(
        self,
        *,
        sink: EventSink,
        uow: UnitOfWork,
        clock: Clock,
        notices: SessionNotices,
        registry: SessionRegistry,
        max_tasks: int = DEFAULT_MAX_TASKS,
    ) -> None:
        self._sink = sink
        self._uow = uow
        self._clock = clock
        self._notices = notices
        self._registry = registry
        self._max = max_tasks
        self._sessions: dict[SessionId, dict[str, _Entry]] = {}
        self._numbers: dict[SessionId, int] = {}
        self._follow_up: FollowUp | None = None
        self._following: set[asyncio.Task[None]] = set()

    def follow_up_with(self, follow_up: FollowUp) -> None:
        """A task that ends while its session is idle starts a turn for the model to react
        (IAC_CODE_TASK_FOLLOW_UP): `follow_up` runs it."""
        self._follow_up = follow_up

    # -- what the session has

    def of(self, session_id: str) -> tuple[BackgroundTask, ...]:
        return tuple(e.task for e in self._sessions.get(SessionId(session_id), {}).values())

    def find(self, session_id: str, task_id: str) -> BackgroundTask | None:
        entry = self._sessions.get(SessionId(session_id), {}).get(task_id.strip())
        return None if entry is None else entry.task

    def running_calls(self, session_id: str) -> dict[str, BackgroundTask]:
        """Its tasks still running here, by their tool call."""
        return {t.tool_call_id: t for t in self.of(session_id) if t.running}

    def running(self, session_id: str) -> int:
        return sum(t.running for t in self.of(session_id))

    # -- starting one

    async def launch(
        self, session: Session, call: ToolCallRecord, workspace: Workspace, command: str
    ) -> BackgroundTask:
        """Start `command` in the session's workspace; its call stays in progress. Raises
        TaskLimitReached when the session runs its maximum already."""
        if self.running(session.id) >= self._max:
            raise TaskLimitReached(
                f"This session already runs {self._max} background tasks, the most it may "
                "(IAC_CODE_MAX_TASKS). Stop one with task_kill, or wait until one exits."
            )
        number = self._numbers[session.id] = self._numbers.get(session.id, 0) + 1
        task = BackgroundTask(
            id=f"t{number}", command=command, tool_call_id=call.id, started_at=self._clock.now()
        )
        started = f"Started in the background as task {task.id}."
        call = replace(
            call,
            status=ToolCallStatus.IN_PROGRESS,
            output=(TextOutput(text=started),),
            raw_output={"taskId": task.id, "background": True},
        )
        await self._sink.emit(
            session.id,
            ToolCallUpdated(
                tool_call_id=call.id,
                status=ToolCallStatus.IN_PROGRESS,
                output=call.output,
                raw_output=call.raw_output,
            ),
        )
        await self._store(session.id, call)  # a load meanwhile shows it running
        entry = _Entry(session_id=session.id, task=task, call=call)
        entry.runner = asyncio.ensure_future(
            workspace.run(
                command,
                cwd=session.cwd,
                seconds=RUN_SECONDS,
                output_limit=OUTPUT_LIMIT,
                chunk=lambda text: self._output(entry, text),
                show=lambda shown: self._show(entry, shown),
            )
        )
        self._sessions.setdefault(session.id, {})[task.id] = entry
        entry.follower = asyncio.ensure_future(self._follow(entry))
        await self._changed(session.id)
        return task

    # -- stopping

    async def kill(self, session_id: str, task_id: str) -> BackgroundTask | None:
        """Stop a running task (its whole process tree) and wait until it has ended. None:
        no such task. An exited task is left as it is."""
        entry = self._sessions.get(SessionId(session_id), {}).get(task_id.strip())
        if entry is None:
            return None
        await self._stop(entry)
        return entry.task

    async def end_session(self, session_id: str, *, record: bool = True) -> None:
        """The session ends (closed by its last client, deleted): its tasks are killed and
        forgotten. Without `record` (deleted) nothing more is stored of them."""
        entries = self._sessions.get(SessionId(session_id), {})
        for entry in entries.values():
            entry.silent = not record
        await asyncio.gather(*(self._stop(e) for e in list(entries.values())))
        self._sessions.pop(SessionId(session_id), None)
        self._numbers.pop(SessionId(session_id), None)

    async def end_all(self) -> None:
        """The server stops: every task is killed."""
        await asyncio.gather(*(self.end_session(sid) for sid in list(self._sessions)))

    async def _stop(self, entry: _Entry) -> None:
        if entry.task.running and entry.runner is not None:
            entry.task.killed = True
            entry.runner.cancel()  # the workspace ends the command's whole tree
        if entry.follower is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(entry.follower), STOP_BOUND)

    # -- while it runs

    async def _output(self, entry: _Entry, text: str) -> None:
        entry.task.output.add(text)
        if entry.terminal is None and (entry.flushing is None or entry.flushing.done()):
            entry.flushing = asyncio.ensure_future(self._progress(entry))

    async def _progress(self, entry: _Entry) -> None:
        """One progress update for what came in the last PROGRESS_EVERY seconds."""
        await asyncio.sleep(PROGRESS_EVERY)  # pacing, not synchronisation: a flood coalesces
        if entry.task.running and not entry.silent:
            tail = entry.task.output.text[-PROGRESS_TAIL:]
            await self._sink.emit(
                entry.session_id,
                ToolCallUpdated(tool_call_id=entry.call.id, output=(TextOutput(text=tail),)),
            )

    async def _show(self, entry: _Entry, shown: ToolOutput) -> None:
        """The editor's terminal the command runs in: it shows the output live."""
        if isinstance(shown, TerminalOutput):
            entry.terminal = shown.terminal_id
        await self._sink.emit(
            entry.session_id, ToolCallUpdated(tool_call_id=entry.call.id, output=(shown,))
        )

    async def _follow(self, entry: _Entry) -> None:
        """Until the command ends; then its call ends, and the users are told."""
        assert entry.runner is not None
        await asyncio.wait({entry.runner})
        if entry.flushing is not None:
            entry.flushing.cancel()
        ran = None
        if not entry.runner.cancelled():
            try:
                ran = entry.runner.result()
            except Exception as exc:  # the editor failed its terminal, say
                entry.task.output.add(f"\n{exc}\n")
                log.info("background task %s failed: %s", entry.task.id, exc)
        task = entry.task
        if ran is not None and ran.output and not task.output.total:
            task.output.add(ran.output)  # an editor's terminal gives its output at the end
        task.exited(
            at=self._clock.now(),
            exit_code=None if ran is None else ran.exit_code,
            signal=None if ran is None else ran.signal,
        )
        if not entry.silent:
            await self._finish(entry, ran)

    async def _finish(self, entry: _Entry, ran: CommandRun | None) -> None:
        task = entry.task
        status = ToolCallStatus.COMPLETED if task.succeeded else ToolCallStatus.FAILED
        tail = (ran.output if ran is not None and ran.output else task.output.text)[-PROGRESS_TAIL:]
        text = f"{tail or '(no output)'}\n\nTask {task.id} {task.status_text()}."
        if ran is not None and ran.note:  # what the sandbox stopped
            text = f"{text}\n{ran.note}"
        shown: tuple[ToolOutput, ...] = (TextOutput(text=text),)
        if entry.terminal is not None:  # the editor keeps showing it; a replay shows text
            shown = (TerminalOutput(terminal_id=entry.terminal, text=text),)
        raw = {"taskId": task.id, "background": True, "exitCode": task.exit_code}
        if task.signal:
            raw["signal"] = task.signal
        if task.killed:
            raw["killed"] = True
        record = replace(entry.call, status=status, output=shown, raw_output=raw)
        entry.call = record
        await self._sink.emit(
            entry.session_id,
            ToolCallUpdated(tool_call_id=record.id, status=status, output=shown, raw_output=raw),
        )
        await self._store(entry.session_id, record)
        self._trim(entry.session_id)
        await self._changed(entry.session_id)
        if not task.killed and not self._busy(entry.session_id):
            await self._tell_exit(entry)
            self._start_follow_up(entry)

    async def _tell_exit(self, entry: _Entry) -> None:
        """Nobody's turn will show it: the users are told the task ended."""
        task = entry.task
        severity = Severity.INFO if task.succeeded else Severity.WARNING
        last = task.output.last_lines(LAST_LINES)
        title = f"Background task {task.id} (`{one_line(task.command)}`) {task.status_text()}."
        await self._notices.tell_session(entry.session_id, severity, title, last)

    def _start_follow_up(self, entry: _Entry) -> None:
        """Its own task: stopping the background task must not wait for a whole turn."""
        if self._follow_up is None:
            return
        task = entry.task
        last = task.output.last_lines(LAST_LINES)
        text = f"Background task {task.id} (`{one_line(task.command)}`) {task.status_text()}." + (
            f" Its last output:\n{last}" if last else ""
        )
        turn = asyncio.ensure_future(self._follow_up(entry.session_id, text))
        self._following.add(turn)
        turn.add_done_callback(self._following.discard)

    # -- bookkeeping

    def _busy(self, session_id: str) -> bool:
        return self._registry.is_busy(session_id)

    def _trim(self, session_id: SessionId) -> None:
        entries = self._sessions.get(session_id, {})
        exited = [k for k, e in entries.items() if not e.task.running]
        for key in exited[: max(0, len(exited) - KEEP_EXITED)]:
            del entries[key]

    async def _changed(self, session_id: SessionId) -> None:
        summaries = tuple(t.summary() for t in self.of(session_id))
        await self._sink.emit(session_id, TasksChanged(tasks=summaries))

    async def tell_list(self, session_id: str, sink: EventSink) -> None:
        """A client attaching to the session learns its tasks (when it has any)."""
        if tasks := self.of(session_id):
            await sink.emit(
                SessionId(session_id), TasksChanged(tasks=tuple(t.summary() for t in tasks))
            )

    async def _store(self, session_id: SessionId, record: ToolCallRecord) -> None:
        try:
            async with self._uow as uow:
                await uow.activity.record_tool_call(session_id, record)
                await uow.commit()
        except Exception:  # storage down: the task goes on; its live updates still go out
            log.exception("storing background task call %s failed", record.id)
