"""Modes, options and leaving plan mode, with in-memory fakes of every port."""

from collections.abc import Mapping

import pytest

from application.notices.session_notices import SessionNotices
from application.ports.tools import ToolResult
from application.sessions.new_session import NewSessionRequest
from application.sessions.settings import SetConfigOptionRequest, SetModeRequest
from application.tasks.background_tasks import BackgroundTasks
from application.tools.permissions import PLANNING
from application.tools.plan_exit import KEEP_PLANNING
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.errors import InvalidConfigValue, UnknownConfigOption
from domain.events import ConfigOptionsChanged, ModeChanged
from domain.permission import Decider, PermissionOption
from domain.stop_reason import StopReason
from tests.unit.application.test_tools import final, ok, tool_results, uses
from tests.unit.application.world import World


async def open_session(world: World, mode: str | None = None) -> str:
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    if mode is not None:
        await world.set_mode().execute(SetModeRequest(session_id=state.session_id, mode_id=mode))
    world.sink.events.clear()
    return state.session_id


async def prompt(world: World, sid: str, *scripts: list) -> StopReason:  # type: ignore[type-arg]
    world.llm.scripts.extend(scripts)
    result = await world.prompt().execute(
        PromptRequest(session_id=sid, content=(TextBlock(text="go"),))
    )
    return result.stop_reason


def option_values(event: ConfigOptionsChanged) -> dict[str, str]:
    return {o.id: o.current_value for o in event.options}


@pytest.mark.parametrize("door", ["set_mode", "set_config_option"])
async def test_both_doors_change_the_mode_store_it_and_tell_the_client(
    world: World, door: str
) -> None:
    sid = await open_session(world)
    if door == "set_mode":
        await world.set_mode().execute(SetModeRequest(session_id=sid, mode_id="plan"))
    else:
        state = await world.set_option().execute(
            SetConfigOptionRequest(session_id=sid, option_id="mode", value="plan")
        )
        assert state.current_mode_id == "plan"
        assert {o.id: o.current_value for o in state.options}["mode"] == "plan"
    assert world.uow.sessions.stored[sid].settings["mode_id"] == "plan"  # type: ignore[index]
    mode, options = (e for _, e in world.sink.events)
    assert mode == ModeChanged(mode_id="plan")
    assert isinstance(options, ConfigOptionsChanged) and option_values(options)["mode"] == "plan"


async def test_other_options_tell_the_client_without_a_mode_update(world: World) -> None:
    sid = await open_session(world)
    await world.set_option().execute(
        SetConfigOptionRequest(session_id=sid, option_id="thought_level", value="high")
    )
    (event,) = (e for _, e in world.sink.events)
    assert isinstance(event, ConfigOptionsChanged)
    assert option_values(event) == {"mode": "default", "model": "m1", "thought_level": "high"}


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("mode", "yolo", InvalidConfigValue),
        ("thought_level", "extreme", InvalidConfigValue),
        ("temperature", "1", UnknownConfigOption),
    ],
)
async def test_bad_options_change_nothing_and_say_nothing(
    world: World, option: str, value: str, error: type[Exception]
) -> None:
    sid = await open_session(world)
    before = dict(world.uow.sessions.stored[sid].settings)
    with pytest.raises(error):
        await world.set_option().execute(
            SetConfigOptionRequest(session_id=sid, option_id=option, value=value)
        )
    assert world.uow.sessions.stored[sid].settings == before
    assert world.sink.events == []


async def test_plan_mode_refuses_edits_and_commands_without_asking(world: World) -> None:
    world.tools.tools = {"write_file": ok, "bash": ok, "read_file": ok}
    sid = await open_session(world, "plan")
    stop = await prompt(
        world,
        sid,
        uses(
            ("read_file", {"path": "a"}),
            ("write_file", {"path": "a"}),
            ("bash", {"command": "make"}),
        ),
        final(),
    )
    assert stop is StopReason.END_TURN
    assert world.asker.requests == []
    assert [n for n, _ in world.tools.ran] == ["read_file"]
    results = tool_results(world, sid)
    assert [r.content for r in results[1:]] == [PLANNING, PLANNING]
    deciders = [d.decided_by for d in world.uow.sessions.decisions[sid]]
    assert deciders == [Decider.MODE, Decider.MODE]
    request = world.llm.requests[0]
    assert "## Mode: Plan" in request.system
    assert "exit_plan_mode" in {t.name for t in request.tools}


async def test_plan_mode_refuses_a_background_command_without_asking(world: World) -> None:
    world.tasks = BackgroundTasks(
        sink=world.sink,
        uow=world.uow,
        clock=world.clock,
        notices=SessionNotices(sink=world.sink, ids=world.ids),
        registry=world.registry,
    )
    world.tools.tools = {"bash": ok}
    sid = await open_session(world, "plan")
    background = {"command": "npm run dev", "run_in_background": True}
    stop = await prompt(world, sid, uses(("bash", background)), final())
    assert stop is StopReason.END_TURN
    assert world.asker.requests == [] and world.tools.ran == []
    assert [r.content for r in tool_results(world, sid)] == [PLANNING]
    assert world.tasks.of(sid) == ()


async def test_plan_mode_refuses_edits_even_where_a_project_rule_allows_them(
    world: World,
) -> None:
    world.tools.tools = {"write_file": ok}
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS]
    sid = await open_session(world)
    await prompt(world, sid, uses(("write_file", {"path": "a"})), final())
    assert len(world.uow.rules.rules) == 1
    await world.set_mode().execute(SetModeRequest(session_id=sid, mode_id="plan"))
    await prompt(world, sid, uses(("write_file", {"path": "b"})), final())
    assert tool_results(world, sid)[-1].content == PLANNING
    assert len(world.tools.ran) == 1


async def test_other_modes_do_not_offer_exit_plan_mode(world: World) -> None:
    sid = await open_session(world, "accept_edits")
    await prompt(world, sid, final())
    request = world.llm.requests[0]
    assert "exit_plan_mode" not in {t.name for t in request.tools}
    assert "## Mode: Plan" not in request.system


async def test_accepting_the_plan_switches_mode_and_the_turn_goes_on(world: World) -> None:
    world.tools.tools = {"write_file": ok, "bash": ok}
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS, PermissionOption.REJECT_ONCE]
    sid = await open_session(world, "plan")
    stop = await prompt(
        world,
        sid,
        uses(("exit_plan_mode", {"plan": "1. Write a.\n2. Build."})),
        uses(("write_file", {"path": "a"}), ("bash", {"command": "make"})),
        final(),
    )
    assert stop is StopReason.END_TURN
    leave, build = world.asker.requests  # the write ran without asking; bash still asks
    assert [leave.option_id(o) for o in leave.options] == ["accept_edits", "default", "plan"]
    assert leave.preview[0].text == "1. Write a.\n2. Build."  # type: ignore[union-attr]
    assert build.tool_name == "bash"
    assert [n for n, _ in world.tools.ran] == ["write_file"]
    assert world.sink.of_type(ModeChanged) == [ModeChanged(mode_id="accept_edits")]
    assert world.uow.sessions.stored[sid].settings["mode_id"] == "accept_edits"  # type: ignore[index]
    first = tool_results(world, sid)[0]
    assert not first.is_error and "approved" in first.content
    assert "## Mode: Plan" not in world.llm.requests[1].system  # the next request knows


async def test_approving_with_default_mode_asks_for_each_edit(world: World) -> None:
    world.tools.tools = {"write_file": ok}
    world.asker.answers = [PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE]
    sid = await open_session(world, "plan")
    await prompt(
        world,
        sid,
        uses(("exit_plan_mode", {"plan": "Write a."})),
        uses(("write_file", {"path": "a"})),
        final(),
    )
    assert [r.tool_name for r in world.asker.requests] == ["exit_plan_mode", "write_file"]
    assert world.uow.sessions.stored[sid].settings["mode_id"] == "default"  # type: ignore[index]


async def test_keep_planning_stays_in_plan_mode(world: World) -> None:
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    sid = await open_session(world, "plan")
    await prompt(world, sid, uses(("exit_plan_mode", {"plan": "Write a."})), final())
    assert tool_results(world, sid)[0].content == KEEP_PLANNING
    assert world.sink.of_type(ModeChanged) == []
    assert world.uow.sessions.stored[sid].settings["mode_id"] == "plan"  # type: ignore[index]


async def test_cancelling_the_plan_question_ends_the_turn(world: World) -> None:
    world.asker.answers = [None]
    sid = await open_session(world, "plan")
    stop = await prompt(world, sid, uses(("exit_plan_mode", {"plan": "Write a."})))
    assert stop is StopReason.CANCELLED
    assert world.uow.sessions.stored[sid].settings["mode_id"] == "plan"  # type: ignore[index]


@pytest.mark.parametrize(
    ("mode", "arguments"), [("default", {"plan": "p"}), ("plan", {}), ("plan", {"plan": " "})]
)
async def test_exit_plan_mode_outside_plan_mode_or_without_a_plan_fails_unasked(
    world: World, mode: str, arguments: dict[str, object]
) -> None:
    sid = await open_session(world, mode)
    await prompt(world, sid, uses(("exit_plan_mode", arguments)), final())
    assert world.asker.requests == []
    assert tool_results(world, sid)[0].is_error


async def test_accept_edits_writes_without_asking_but_asks_for_commands(world: World) -> None:
    world.tools.tools = {"write_file": ok, "edit_file": ok, "bash": ok}
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    sid = await open_session(world, "accept_edits")
    await prompt(
        world,
        sid,
        uses(
            ("write_file", {"path": "a"}),
            ("edit_file", {"path": "a"}),
            ("bash", {"command": "make"}),
        ),
        final(),
    )
    assert [r.tool_name for r in world.asker.requests] == ["bash"]
    assert [n for n, _ in world.tools.ran] == ["write_file", "edit_file"]


async def test_bypass_runs_everything_inside_the_project_unasked(world: World) -> None:
    world.tools.tools = {"write_file": ok, "bash": ok, "agent": ok}
    sid = await open_session(world, "bypass")
    await prompt(
        world,
        sid,
        uses(("write_file", {"path": "a"}), ("bash", {"command": "make"}), ("agent", {})),
        final(),
    )
    assert world.asker.requests == []
    assert [n for n, _ in world.tools.ran] == ["write_file", "bash", "agent"]


async def test_a_mode_change_mid_turn_applies_to_the_next_tool_call(world: World) -> None:
    sid = ""

    async def switch_to_plan(arguments: Mapping[str, object]) -> ToolResult:
        await world.set_mode().execute(SetModeRequest(session_id=sid, mode_id="plan"))
        return ToolResult(text="read")

    world.tools.tools = {"read_file": switch_to_plan, "write_file": ok}
    sid = await open_session(world, "accept_edits")
    await prompt(
        world, sid, uses(("read_file", {"path": "a"}), ("write_file", {"path": "a"})), final()
    )
    assert tool_results(world, sid)[1].content == PLANNING
    assert "## Mode: Plan" in world.llm.requests[1].system


async def test_thought_level_sets_the_budget_from_the_next_prompt(world: World) -> None:
    sid = await open_session(world)
    await prompt(world, sid, final())
    await world.set_option().execute(
        SetConfigOptionRequest(session_id=sid, option_id="thought_level", value="high")
    )
    await prompt(world, sid, final())
    off, high = world.llm.requests
    assert (off.thinking_budget, off.max_tokens) == (0, 1000)
    assert (high.thinking_budget, high.max_tokens) == (32_000, 33_000)


async def test_thought_level_holds_for_the_whole_turn(world: World) -> None:
    sid = ""

    async def think_harder(arguments: Mapping[str, object]) -> ToolResult:
        await world.set_option().execute(
            SetConfigOptionRequest(session_id=sid, option_id="thought_level", value="low")
        )
        return ToolResult(text="read")

    world.tools.tools = {"read_file": think_harder}
    sid = await open_session(world)
    await prompt(world, sid, uses(("read_file", {"path": "a"})), final())
    await prompt(world, sid, final())
    assert [r.thinking_budget for r in world.llm.requests] == [0, 0, 4000]


async def test_a_model_that_cannot_think_gets_no_budget(world: World) -> None:
    sid = await open_session(world)
    await world.set_option().execute(
        SetConfigOptionRequest(session_id=sid, option_id="thought_level", value="high")
    )
    state = await world.set_option().execute(
        SetConfigOptionRequest(session_id=sid, option_id="model", value="m2")
    )
    assert "thought_level" not in {o.id for o in state.options}
    await prompt(world, sid, final())
    assert world.llm.requests[0].thinking_budget == 0
