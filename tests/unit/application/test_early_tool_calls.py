"""A tool call is shown as soon as the model begins it; the tool phase then fills it in
(never shows it twice), and a call that will not run is not left pending."""

import asyncio
from collections.abc import AsyncIterator, Mapping

from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, ToolUseStarted
from application.ports.tools import ToolResult
from application.sessions.new_session import NewSessionRequest
from application.turn.prompt import PromptRequest
from domain.content import TextBlock, ToolUseBlock
from domain.events import AgentEvent, ToolCallStarted, ToolCallUpdated
from domain.stop_reason import ModelStop, StopReason
from domain.tool_call import ToolCallStatus, ToolKind
from domain.usage import Usage
from tests.unit.application.test_tools import final, run_turn
from tests.unit.application.world import World


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text="fine")


def announced_uses(*calls: tuple[str, dict[str, object]]) -> list[ModelEvent]:
    blocks = tuple(
        ToolUseBlock(id=f"toolu_{i}", name=name, input=args) for i, (name, args) in enumerate(calls)
    )
    started: list[ModelEvent] = [ToolUseStarted(id=b.id, name=b.name) for b in blocks]
    return [
        *started,
        ModelResponse(content=blocks, stop=ModelStop.TOOL_USE, usage=Usage(output_tokens=1)),
    ]


def tool_events(world: World, call_id: str) -> list[AgentEvent]:
    return [
        e
        for _, e in world.sink.events
        if isinstance(e, ToolCallStarted | ToolCallUpdated) and e.tool_call_id == call_id
    ]


async def test_the_call_is_shown_when_it_starts_and_filled_in_once_complete(
    world: World,
) -> None:
    world.tools.tools = {"read_file": ok}
    _, stop = await run_turn(world, announced_uses(("read_file", {"path": "a.py"})), final())
    assert stop is StopReason.END_TURN
    shown = tool_events(world, "toolu_0")
    first, filled, *rest = shown
    assert first == ToolCallStarted(
        tool_call_id="toolu_0",  # type: ignore[arg-type]
        title="read_file",
        kind=ToolKind.READ,
        arguments=None,
        name="read_file",
    )
    assert filled == ToolCallUpdated(
        tool_call_id="toolu_0",  # type: ignore[arg-type]
        title="Read a.py",
        locations=("/work/a.py",),
        arguments={"path": "a.py"},
    )
    assert [e for e in shown if isinstance(e, ToolCallStarted)] == [first]  # shown once
    statuses = [e.status for e in rest if isinstance(e, ToolCallUpdated) and e.status]
    assert statuses == [ToolCallStatus.IN_PROGRESS, ToolCallStatus.COMPLETED]


async def test_a_call_never_announced_is_shown_by_the_tool_phase_as_before(
    world: World,
) -> None:
    world.tools.tools = {"read_file": ok}
    script = announced_uses(("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"}))
    del script[1]  # the second call's start was not reported early
    await run_turn(world, script, final())
    (early,) = [e for e in tool_events(world, "toolu_0") if isinstance(e, ToolCallStarted)]
    (late,) = [e for e in tool_events(world, "toolu_1") if isinstance(e, ToolCallStarted)]
    assert early.arguments is None
    assert late.arguments == {"path": "b.py"} and late.title == "Read b.py"


async def test_a_call_cut_off_by_cancel_is_shown_as_failed_not_left_pending(
    world: World,
) -> None:
    begun = asyncio.Event()

    async def cut_off(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield ToolUseStarted(id="toolu_9", name="bash")
        begun.set()
        await asyncio.Event().wait()  # the input never completes
        yield ToolUseStarted(id="never", name="never")

    world.llm.scripts = [cut_off]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    running = asyncio.create_task(
        world.prompt().execute(
            PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
        )
    )
    await begun.wait()
    world.cancel().execute(state.session_id)
    result = await asyncio.wait_for(running, 5)
    assert result.stop_reason is StopReason.CANCELLED
    started, settled = tool_events(world, "toolu_9")
    assert isinstance(started, ToolCallStarted) and started.kind is ToolKind.EXECUTE
    assert settled == ToolCallUpdated(
        tool_call_id="toolu_9",  # type: ignore[arg-type]
        status=ToolCallStatus.CANCELLED,
    )
    assert world.tools.ran == []


async def test_calls_skipped_after_a_cancel_are_settled_once(world: World) -> None:
    started = asyncio.Event()

    async def slow(arguments: Mapping[str, object]) -> ToolResult:
        started.set()
        await asyncio.Event().wait()
        return ToolResult(text="never")

    world.tools.tools = {"read_file": slow}
    world.llm.scripts = [announced_uses(("read_file", {"path": "a"}), ("read_file", {"path": "b"}))]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    running = asyncio.create_task(
        world.prompt().execute(
            PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
        )
    )
    await started.wait()
    world.cancel().execute(state.session_id)
    await asyncio.wait_for(running, 5)
    second = tool_events(world, "toolu_1")
    assert [type(e) for e in second] == [ToolCallStarted, ToolCallUpdated]
    assert isinstance(second[1], ToolCallUpdated)
    assert second[1].status is ToolCallStatus.CANCELLED
    first_statuses = [
        e.status for e in tool_events(world, "toolu_0") if isinstance(e, ToolCallUpdated)
    ]
    assert first_statuses.count(ToolCallStatus.CANCELLED) == 1
