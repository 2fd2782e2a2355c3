"""One round of tool uses through the ToolPhase alone (no model, no prompt): what it gives
back to the turn."""

import asyncio
from collections.abc import Mapping

import pytest

from application.ports.permissions import PermissionUnavailable
from application.ports.tools import ToolResult
from application.runtime.turn_control import TurnControl
from application.sessions.new_session import NewSessionRequest
from application.tools.call_log import NOT_RUN
from application.tools.plan_exit import KEEP_PLANNING
from domain.content import ToolResultBlock, ToolUseBlock
from domain.events import ToolCallUpdated
from domain.modes import ModeId
from domain.session import Session
from domain.tool_call import ToolCallStatus
from domain.usage import Usage
from tests.factories import T0
from tests.support.patience import PATIENCE
from tests.unit.application.world import World


async def sub_agent(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text="found it", usage=Usage(input_tokens=100, output_tokens=10))


def use(name: str, index: int = 0, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id=f"toolu_{index}", name=name, input=arguments)


async def open_session(world: World, mode: ModeId = ModeId.DEFAULT) -> Session:
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    session = world.registry.require(state.session_id).session
    session.set_mode(mode, at=T0)
    return session


async def test_what_the_tools_own_requests_used_comes_back_with_the_results(
    world: World,
) -> None:
    world.tools.tools = {"agent": sub_agent}
    session = await open_session(world, ModeId.BYPASS)
    uses = (use("agent", 0, task="a"), use("agent", 1, task="b"))

    phase = world.tool_phase()
    ran = await phase.run(session, TurnControl(), uses)

    assert ran.results == (
        ToolResultBlock(tool_use_id="toolu_0", content="found it"),
        ToolResultBlock(tool_use_id="toolu_1", content="found it"),
    )
    assert ran.spent == Usage(input_tokens=200, output_tokens=20)
    # Nothing is carried over: the next round starts again from nothing.
    again = await phase.run(session, TurnControl(), ())
    assert again.spent == Usage()


async def test_a_round_settles_the_calls_shown_early_that_never_came(world: World) -> None:
    session = await open_session(world)
    control = TurnControl()
    await world.tool_calls().announce(session, control, "toolu_9", "bash")

    ran = await world.tool_phase().run(session, control, ())

    assert ran.results == ()
    (settled,) = world.sink.of_type(ToolCallUpdated)
    assert (settled.tool_call_id, settled.status) == ("toolu_9", ToolCallStatus.CANCELLED)
    assert control.announced == set()


async def test_a_cancelled_turn_answers_every_use_unrun(world: World) -> None:
    world.tools.tools = {"agent": sub_agent}
    session = await open_session(world, ModeId.BYPASS)
    control = TurnControl()
    control.cancelled.set()

    ran = await world.tool_phase().run(session, control, (use("agent", task="a"),))

    assert ran.results == (ToolResultBlock(tool_use_id="toolu_0", content=NOT_RUN, is_error=True),)
    assert world.tools.ran == []


async def test_a_plan_nobody_could_approve_keeps_the_session_planning(world: World) -> None:
    world.asker.answers = [PermissionUnavailable("the client is gone")]
    session = await open_session(world, ModeId.PLAN)

    ran = await world.tool_phase().run(
        session, TurnControl(), (use("exit_plan_mode", plan="1. Write a."),)
    )

    assert ran.results == (ToolResultBlock(tool_use_id="toolu_0", content=KEEP_PLANNING),)
    assert session.mode_id == ModeId.PLAN


async def test_sub_agents_started_together_run_at_once_up_to_the_limit(world: World) -> None:
    both_running = asyncio.Event()
    running = 0

    async def meets_the_other(arguments: Mapping[str, object]) -> ToolResult:
        nonlocal running
        running += 1
        if running == 2:
            both_running.set()
        # One after the other, the first would wait here for ever.
        await asyncio.wait_for(both_running.wait(), PATIENCE)
        return ToolResult(text=f"found {arguments['task']}")

    world.tools.tools = {"agent": meets_the_other}
    session = await open_session(world, ModeId.BYPASS)
    uses = (use("agent", 0, task="a"), use("agent", 1, task="b"), use("agent", 2, task="c"))

    ran = await world.tool_phase(max_subagents=2).run(session, TurnControl(), uses)

    assert [r.content for r in ran.results[:2]] == ["found a", "found b"]
    assert ran.results[2].is_error
    assert "At most 2 sub-agents" in str(ran.results[2].content)
    assert len(world.tools.ran) == 2


async def test_a_sub_agent_failing_unexpectedly_stops_the_others(world: World) -> None:
    stopped = asyncio.Event()
    other_started = asyncio.Event()

    async def hangs_or_breaks(arguments: Mapping[str, object]) -> ToolResult:
        if arguments["task"] == "breaks":
            await asyncio.wait_for(other_started.wait(), PATIENCE)
            raise RuntimeError("the store went away")
        other_started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        raise AssertionError("never answers")

    world.tools.tools = {"agent": hangs_or_breaks}
    session = await open_session(world, ModeId.BYPASS)
    uses = (use("agent", 0, task="hangs"), use("agent", 1, task="breaks"))

    with pytest.raises(RuntimeError, match="store went away"):
        await world.tool_phase().run(session, TurnControl(), uses)
    assert stopped.is_set()  # not left running
