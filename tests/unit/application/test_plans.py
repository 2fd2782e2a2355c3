"""The plan tool, todo_write, with in-memory fakes of every port: it runs in-process in every
mode without asking, sends the whole plan, fails clearly on bad input, and replays on load."""

from collections.abc import Mapping

import pytest

from application.ports.llm import ModelResponse
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from application.sessions.settings import SetModeRequest
from application.tools.plan_tool import TODO_WRITE_TOOL
from application.turn.prompt import PromptRequest
from domain.content import TextBlock, ToolUseBlock
from domain.events import PlanUpdated, ToolCallStarted, ToolCallUpdated
from domain.plan import PlanEntry, PlanPriority, PlanStatus, current_plan
from domain.stop_reason import ModelStop, StopReason
from domain.tool_call import ToolCallStatus, ToolKind
from domain.usage import Usage
from tests.fakes.turn import FakeTools, ScriptedLLM
from tests.unit.application.test_subagent import CONTEXT, answer, asks, make, nothing
from tests.unit.application.test_tools import final, ok, tool_results, uses
from tests.unit.application.world import World

MODES = ("default", "accept_edits", "plan", "bypass")
FIRST = {
    "todos": [
        {"content": "Read the parser", "status": "in_progress", "priority": "high"},
        {"content": "Fix the bug", "status": "pending"},
        {"content": "Add a test", "status": "pending", "priority": "low"},
    ]
}
SECOND = {
    "todos": [
        {"content": "Read the parser", "status": "completed", "priority": "high"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Add a test", "status": "pending", "priority": "low"},
    ]
}
BAD = {"todos": [{"content": "Fix the bug", "status": "doing"}]}
H, M, L = PlanPriority.HIGH, PlanPriority.MEDIUM, PlanPriority.LOW
FIRST_PLAN = (
    PlanEntry(content="Read the parser", status=PlanStatus.IN_PROGRESS, priority=H),
    PlanEntry(content="Fix the bug", status=PlanStatus.PENDING, priority=M),
    PlanEntry(content="Add a test", status=PlanStatus.PENDING, priority=L),
)
SECOND_PLAN = (
    PlanEntry(content="Read the parser", status=PlanStatus.COMPLETED, priority=H),
    PlanEntry(content="Fix the bug", status=PlanStatus.IN_PROGRESS, priority=M),
    PlanEntry(content="Add a test", status=PlanStatus.PENDING, priority=L),
)


async def open_session(world: World, mode: str = "default") -> str:
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    if mode != "default":
        await world.set_mode().execute(SetModeRequest(session_id=state.session_id, mode_id=mode))
    world.sink.events.clear()
    return state.session_id


async def prompt(world: World, sid: str, *scripts: list, **limits: int) -> StopReason:  # type: ignore[type-arg]
    world.llm.scripts.extend(scripts)
    result = await world.prompt(**limits).execute(
        PromptRequest(session_id=sid, content=(TextBlock(text="go"),))
    )
    return result.stop_reason


def writes(call_id: str, arguments: Mapping[str, object]) -> list:  # type: ignore[type-arg]
    """A model reply calling todo_write once, under its own id."""
    use = ToolUseBlock(id=call_id, name="todo_write", input=dict(arguments))
    return [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=Usage())]


def shown(world: World) -> list[object]:
    """What the client was shown of tool calls and plans, in order."""
    kinds = ToolCallStarted | ToolCallUpdated | PlanUpdated
    return [e for _, e in world.sink.events if isinstance(e, kinds)]


@pytest.mark.parametrize("mode", MODES)
async def test_todo_write_runs_unasked_in_every_mode_and_sends_the_whole_plan(
    world: World, mode: str
) -> None:
    world.tools.tools = {"read_file": ok}
    sid = await open_session(world, mode)
    stop = await prompt(world, sid, uses(("todo_write", FIRST)), final())
    assert stop is StopReason.END_TURN
    assert world.asker.requests == []
    assert world.tools.ran == []  # in-process: the runner is never involved
    assert world.uow.sessions.decisions.get(sid, []) == []  # nothing to decide, nothing stored
    started, running, done, plan = shown(world)
    assert isinstance(started, ToolCallStarted)
    assert (started.kind, started.title) == (ToolKind.THINK, "Update plan (0/3 done)")
    assert started.arguments == FIRST
    assert isinstance(running, ToolCallUpdated) and running.status is ToolCallStatus.IN_PROGRESS
    assert isinstance(done, ToolCallUpdated) and done.status is ToolCallStatus.COMPLETED
    assert plan == PlanUpdated(entries=FIRST_PLAN)
    (result,) = tool_results(world, sid)
    assert (result.content, result.is_error) == (
        "Plan updated: 0 of 3 done (1 in progress, 2 pending).",
        False,
    )
    assert world.llm.requests[1].messages[-1].tool_results == (result,)
    record = world.uow.sessions.tool_calls_by_session[sid]["toolu_0"]
    assert (record.kind, record.status) == (ToolKind.THINK, ToolCallStatus.COMPLETED)


@pytest.mark.parametrize("mode", MODES)
async def test_todo_write_is_offered_in_every_mode_and_the_model_told_to_use_it(
    world: World, mode: str
) -> None:
    sid = await open_session(world, mode)
    await prompt(world, sid, final())
    request = world.llm.requests[0]
    (offered,) = [t for t in request.tools if t.name == "todo_write"]
    assert offered == TODO_WRITE_TOOL
    assert "keep a plan with `todo_write`" in " ".join(request.system.split())


def test_the_schema_names_every_status_and_priority() -> None:
    item = TODO_WRITE_TOOL.input_schema["properties"]["todos"]["items"]  # type: ignore[index]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert item["properties"]["priority"]["enum"] == ["high", "medium", "low"]
    assert item["required"] == ["content", "status"]
    assert TODO_WRITE_TOOL.input_schema["required"] == ["todos"]


async def test_each_call_sends_the_complete_list_as_it_now_is(world: World) -> None:
    sid = await open_session(world)
    await prompt(world, sid, writes("t1", FIRST), writes("t2", SECOND), final())
    assert world.sink.of_type(PlanUpdated) == [
        PlanUpdated(entries=FIRST_PLAN),
        PlanUpdated(entries=SECOND_PLAN),
    ]
    assert tool_results(world, sid)[1].content == (
        "Plan updated: 1 of 3 done (1 in progress, 1 pending)."
    )
    assert current_plan(world.uow.sessions.messages[sid]) == SECOND_PLAN


async def test_bad_input_fails_the_call_and_says_how_to_fix_it(world: World) -> None:
    sid = await open_session(world)
    await prompt(world, sid, writes("t1", FIRST), writes("t2", BAD), final())
    assert world.sink.of_type(PlanUpdated) == [PlanUpdated(entries=FIRST_PLAN)]  # unchanged
    bad = tool_results(world, sid)[1]
    assert bad.is_error
    assert bad.content == (
        "Invalid plan: todos[0].status must be one of pending, in_progress, completed "
        "(not 'doing'). Send the complete list again, corrected."
    )
    assert world.llm.requests[2].messages[-1].tool_results == (bad,)
    statuses = [
        e.status
        for e in world.sink.of_type(ToolCallUpdated)
        if e.tool_call_id == "t2" and e.status  # type: ignore[union-attr]
    ]
    assert statuses[-1] is ToolCallStatus.FAILED
    assert world.asker.requests == []
    assert current_plan(world.uow.sessions.messages[sid]) == FIRST_PLAN


async def test_an_empty_list_clears_the_plan(world: World) -> None:
    sid = await open_session(world)
    await prompt(world, sid, writes("t1", FIRST), writes("t2", {"todos": []}), final())
    assert world.sink.of_type(PlanUpdated)[-1] == PlanUpdated(entries=())
    assert tool_results(world, sid)[-1].content == "Plan cleared."
    started = world.sink.of_type(ToolCallStarted)[-1]
    assert started.title == "Clear plan"  # type: ignore[union-attr]


async def test_a_call_past_the_turn_limit_is_not_run_and_sends_no_plan(world: World) -> None:
    sid = await open_session(world)
    stop = await prompt(world, sid, uses(("todo_write", FIRST)), max_turn_requests=1)
    assert stop is StopReason.MAX_TURN_REQUESTS
    assert world.sink.of_type(PlanUpdated) == []
    assert tool_results(world, sid)[0].is_error
    assert current_plan(world.uow.sessions.messages[sid]) == ()


async def test_load_replays_each_plan_after_its_call_and_ends_with_the_current_one(
    world: World,
) -> None:
    sid = await open_session(world)
    await prompt(
        world,
        sid,
        writes("t1", FIRST),
        writes("t2", BAD),
        writes("t3", SECOND),
        final(),
    )
    live = shown(world)
    world.sink.events.clear()
    await world.registry.close(sid)
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    replayed = shown(world)
    assert [(type(e).__name__, getattr(e, "status", None)) for e in replayed] == [
        ("ToolCallStarted", ToolCallStatus.PENDING),
        ("ToolCallUpdated", ToolCallStatus.COMPLETED),
        ("PlanUpdated", None),
        ("ToolCallStarted", ToolCallStatus.PENDING),
        ("ToolCallUpdated", ToolCallStatus.FAILED),  # the bad call: shown failed, no plan
        ("ToolCallStarted", ToolCallStatus.PENDING),
        ("ToolCallUpdated", ToolCallStatus.COMPLETED),
        ("PlanUpdated", None),
    ]
    plans = [e for e in replayed if isinstance(e, PlanUpdated)]
    assert plans == [PlanUpdated(entries=FIRST_PLAN), PlanUpdated(entries=SECOND_PLAN)]
    # as it was shown live, minus the in_progress steps
    assert replayed == [
        e
        for e in live
        if not (
            isinstance(e, ToolCallUpdated)
            and e.status is not None
            and e.status is ToolCallStatus.IN_PROGRESS
        )
    ]


async def test_a_sub_agent_is_not_offered_todo_write_and_cannot_call_it() -> None:
    llm = ScriptedLLM(asks(("todo_write", FIRST)), answer("done"))
    tools = make(llm, FakeTools(read_file=ok))
    result = await tools.run("agent", {"prompt": "plan"}, CONTEXT, nothing)
    assert result.text == "done"
    assert "todo_write" not in {t.name for t in llm.requests[0].tools}
    (refused,) = llm.requests[1].messages[-1].tool_results
    assert refused.is_error and "not available to a sub-agent" in refused.content
