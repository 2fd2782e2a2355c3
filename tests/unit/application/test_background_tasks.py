"""Background tasks as a use case, on in-memory fakes: a task's call stays in progress until
its command ends; it ends completed or failed, stored, listed, and told to an idle session;
kill, the cap, a deleted session, the model's tools and /tasks."""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from application.commands.tasks import TasksCommand
from application.notices.session_notices import SessionNotices
from application.runtime.command_registry import CommandInput
from application.runtime.registry import SessionRegistry
from application.runtime.turn_control import TurnControl
from application.tasks.background_tasks import BackgroundTasks, TaskLimitReached
from application.tasks.task_tools import TaskTools, check_task_call
from domain.events import SessionNotice, TasksChanged, ToolCallUpdated
from domain.ids import MessageId, ToolCallId
from domain.session import Session
from domain.tasks import BackgroundTask, TaskOutput, as_shown_now, tasks_context
from domain.tool_call import ToolCallRecord, ToolCallStatus, ToolKind
from domain.turn import Turn
from tests.factories import T0, SessionFactory
from tests.fakes.time_and_ids import FixedClock, SequentialIds
from tests.fakes.turn import RecordingSink
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.fakes.workspace import ScriptedWorkspace
from tests.support.patience import PATIENCE


async def wait_until(condition: Callable[[], bool]) -> None:
    """Until `condition` holds, the background work running meanwhile (PATIENCE: a backstop)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not condition():
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0)


def command_input(session: Session, argument: str) -> CommandInput:
    return CommandInput(
        session=session,
        control=TurnControl(),
        turn=Turn(started_at=T0, max_requests=1),
        argument=argument,
        reply_id=MessageId("msg_1"),
        offered=(),
    )


@dataclass
class Bench:
    session: Session
    sink: RecordingSink
    uow: FakeUnitOfWork
    registry: SessionRegistry
    workspace: ScriptedWorkspace
    tasks: BackgroundTasks

    def call(self, call_id: str, command: str) -> ToolCallRecord:
        return ToolCallRecord(
            id=ToolCallId(call_id),
            name="bash",
            title=f"Start `{command}`",
            kind=ToolKind.EXECUTE,
            arguments={"command": command, "run_in_background": True},
            status=ToolCallStatus.PENDING,
        )

    async def launch(self, command: str, call_id: str = "toolu_bg") -> BackgroundTask:
        call = self.call(call_id, command)
        task = await self.tasks.launch(self.session, call, self.workspace, command)
        await wait_until(lambda: command in self.workspace.commands)  # its command runs
        return task

    def updates(self, call_id: str = "toolu_bg") -> list[ToolCallUpdated]:
        return [
            e
            for e in self.sink.of_type(ToolCallUpdated)
            if isinstance(e, ToolCallUpdated) and e.tool_call_id == call_id
        ]

    def stored(self, call_id: str = "toolu_bg") -> ToolCallRecord:
        return self.uow.sessions.stored[self.session.id].tool_calls[call_id]

    def lists(self) -> list[TasksChanged]:
        return [e for e in self.sink.of_type(TasksChanged) if isinstance(e, TasksChanged)]

    def notices(self) -> list[str]:
        """What the user is told: each notice as a client without notices reads it."""
        told = self.sink.of_type(SessionNotice)
        return [e.fallback.text for e in told if isinstance(e, SessionNotice) and e.fallback]


@pytest.fixture
async def bench() -> Bench:
    session = SessionFactory()
    uow = FakeUnitOfWork()
    await uow.sessions.add(session)
    sink, registry = RecordingSink(), SessionRegistry()
    registry.open(session)
    tasks = BackgroundTasks(
        sink=sink,
        uow=uow,
        clock=FixedClock(),
        notices=SessionNotices(sink=sink, ids=SequentialIds()),
        registry=registry,
        max_tasks=2,
    )
    return Bench(session, sink, uow, registry, ScriptedWorkspace(), tasks)


async def test_the_call_stays_in_progress_until_the_command_exits(bench: Bench) -> None:
    task = await bench.launch("make")
    assert task.id == "t1" and task.running
    assert bench.updates()[-1].status is ToolCallStatus.IN_PROGRESS
    assert bench.stored().status is ToolCallStatus.IN_PROGRESS  # a load shows it running
    assert bench.lists()[-1].tasks[0].status == "running"
    await bench.workspace.finish("make", "built\n", 0)
    await wait_until(lambda: not task.running)
    await wait_until(lambda: bool(bench.notices()))
    assert bench.updates()[-1].status is ToolCallStatus.COMPLETED
    assert bench.stored().status is ToolCallStatus.COMPLETED
    assert "built" in str(bench.stored().output)
    assert bench.lists()[-1].tasks[0].status == "exited with code 0"
    assert "Background task t1 (`make`) exited with code 0." in bench.notices()[0]


async def test_a_failure_ends_failed_and_a_running_turn_is_not_interrupted(
    bench: Bench,
) -> None:
    task = await bench.launch("make test")
    bench.registry.require(bench.session.id).begin_turn()  # a turn runs: no notice
    await bench.workspace.finish("make test", "1 failed\n", 2)
    await wait_until(lambda: bench.lists()[-1].tasks[0].exit_code == 2)
    assert bench.updates()[-1].status is ToolCallStatus.FAILED
    assert bench.updates()[-1].raw_output == {"taskId": "t1", "background": True, "exitCode": 2}
    assert bench.notices() == [] and not task.running


async def test_what_the_sandbox_stopped_is_in_the_tasks_result(bench: Bench) -> None:
    await bench.launch("make install")
    note = "[sandbox] This command ran in a sandbox, which blocked a write"
    await bench.workspace.finish("make install", "Read-only file system\n", 2, note=note)
    await wait_until(lambda: bench.updates()[-1].status is ToolCallStatus.FAILED)
    assert note in str(bench.stored().output)


async def test_kill_stops_the_command_and_waits_for_it(bench: Bench) -> None:
    await bench.launch("serve")
    task = await bench.tasks.kill(bench.session.id, "t1")
    assert task is not None and task.killed and not task.running
    assert bench.workspace.commands["serve"].stopped
    assert bench.updates()[-1].status is ToolCallStatus.FAILED
    assert bench.stored().raw_output is not None and bench.stored().raw_output["killed"] is True
    assert bench.notices() == []  # the user (or the model) asked for it
    assert await bench.tasks.kill(bench.session.id, "t7") is None


async def test_the_cap_counts_running_tasks_only(bench: Bench) -> None:
    await bench.launch("one", "toolu_1")
    await bench.launch("two", "toolu_2")
    with pytest.raises(TaskLimitReached, match="already runs 2 background tasks"):
        await bench.launch("three", "toolu_3")
    await bench.workspace.finish("one", "", 0)
    await wait_until(lambda: bench.tasks.running(bench.session.id) == 1)
    assert (await bench.launch("three", "toolu_3")).id == "t3"


async def test_a_deleted_sessions_tasks_end_without_a_trace(bench: Bench) -> None:
    await bench.launch("serve")
    await bench.tasks.end_session(bench.session.id, record=False)
    assert bench.workspace.commands["serve"].stopped
    assert bench.stored().status is ToolCallStatus.IN_PROGRESS  # nothing stored after
    assert bench.tasks.of(bench.session.id) == ()


async def test_closing_the_session_kills_and_records(bench: Bench) -> None:
    await bench.launch("serve")
    await bench.tasks.end_session(bench.session.id)
    assert bench.workspace.commands["serve"].stopped
    assert bench.stored().status is ToolCallStatus.FAILED
    assert bench.tasks.of(bench.session.id) == ()


async def test_the_models_tools(bench: Bench) -> None:
    await bench.launch("serve")
    await bench.workspace.commands["serve"].chunk("listening on 8080\n")
    tools = TaskTools(bench.tasks)
    read = await tools.run(bench.session.id, "task_output", {"id": "t1"})
    assert "listening on 8080" in read.text and "running" in read.text
    again = await tools.run(bench.session.id, "task_output", {"id": "t1"})
    assert again.text.startswith("(no new output)")
    unknown = await tools.run(bench.session.id, "task_kill", {"id": "t5"})
    assert unknown.is_error and "its tasks: t1" in unknown.text
    killed = await tools.run(bench.session.id, "task_kill", {"id": "t1"})
    assert killed.text == "Task t1 was stopped."
    assert check_task_call({"id": ""}).problem and check_task_call({"id": "t1", "tail": 0}).problem


async def test_the_tasks_command(bench: Bench) -> None:
    command = TasksCommand(tasks=bench.tasks, clock=FixedClock())
    assert await command.run(command_input(bench.session, "")) == (
        "No background tasks in this session."
    )
    await bench.launch("npm run dev")
    await bench.workspace.commands["npm run dev"].chunk("ready\n")
    listing = await command.run(command_input(bench.session, ""))
    assert "t1 `npm run dev` running" in listing and "    ready" in listing
    assert "was stopped" in await command.run(command_input(bench.session, "kill t1"))
    assert "had already killed" in await command.run(command_input(bench.session, "kill t1"))
    assert "Usage" in await command.run(command_input(bench.session, "stop everything"))


def test_output_is_bounded_and_read_from_where_the_model_stopped() -> None:
    output = TaskOutput(keep=10)
    output.add("0123456789abcdef")
    assert output.text == "6789abcdef" and output.total == 16
    assert output.since(0, limit=100) == ("6789abcdef", 6)  # 6 characters were not kept
    assert output.since(14, limit=100) == ("ef", 0)
    assert output.since(0, limit=4) == ("cdef", 12)
    task = BackgroundTask(id="t1", command="x", tool_call_id=ToolCallId("c"), started_at=T0)
    task.output.add("a" * 20_000)
    assert "characters not shown" in task.read_new(limit=100) and task.read_new() == ""


def test_the_model_is_told_its_tasks_with_the_turn() -> None:
    task = BackgroundTask(
        id="t1", command="npm  run\ndev", tool_call_id=ToolCallId("c"), started_at=T0
    )
    assert tasks_context((), T0) is None
    told = tasks_context((task,), T0.replace(minute=2, second=5))
    assert told is not None and "t1 `npm run dev` running, for 2m05s" in told


def test_a_load_shows_a_call_stored_running_as_ended_when_its_task_is_gone() -> None:
    stored = ToolCallRecord(
        id=ToolCallId("toolu_bg"),
        name="bash",
        title="Start `serve`",
        kind=ToolKind.EXECUTE,
        arguments={"command": "serve", "run_in_background": True},
        status=ToolCallStatus.IN_PROGRESS,
        raw_output={"taskId": "t1", "background": True},
    )
    task = BackgroundTask(id="t1", command="serve", tool_call_id=stored.id, started_at=T0)
    assert as_shown_now(stored, {"toolu_bg": task}) == stored  # running, nothing printed yet
    task.output.add("listening\n")
    running = as_shown_now(stored, {"toolu_bg": task})  # running here: its output so far
    assert running.status is ToolCallStatus.IN_PROGRESS and "listening" in str(running.output)
    shown = as_shown_now(stored, {})
    assert shown.status is ToolCallStatus.FAILED and "server stopped" in str(shown.output)
    foreground = replace(stored, raw_output={"exitCode": None})
    assert as_shown_now(foreground, {}) == foreground
