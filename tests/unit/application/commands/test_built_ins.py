"""The built-in slash commands: help, rename, model, mode, usage, clear."""

import pytest

from application.commands.context import CLEARED
from domain.config import Catalog
from domain.events import (
    ConfigOptionsChanged,
    ModeChanged,
    Notice,
    PlanUpdated,
    SessionTitleChanged,
    UsageUpdated,
)
from domain.message import MessageKind
from domain.models import ModelInfo, Prices
from domain.modes import offered_modes
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.unit.application.commands.support import BUILT_IN, run, stored
from tests.unit.application.test_prompt import ask, open_session, reply
from tests.unit.application.world import World


async def test_help_lists_every_command_with_its_hint(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/help")
    specs = world.commands().specs()
    assert [s.name for s in specs] == BUILT_IN
    for spec in specs:
        usage = f"/{spec.name}" + (f" <{spec.hint}>" if spec.hint else "")
        assert f"- `{usage}`: {spec.description}" in text.splitlines()
    assert "`//`" in text  # how to send a "/" to the model


async def test_rename_with_a_title(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/rename   Fix the parser  ")
    assert text == "Renamed the session to “Fix the parser”."
    assert world.registry.require(sid).session.title == "Fix the parser"
    assert world.sink.of_type(SessionTitleChanged) == [SessionTitleChanged(title="Fix the parser")]
    stored_title = world.uow.sessions.stored[sid].settings["title"]  # type: ignore[index]
    assert stored_title == "Fix the parser"


async def test_rename_without_a_title_says_how(world: World) -> None:
    sid = await open_session(world)
    assert await run(world, sid, "/rename") == "Usage: /rename <title>"
    assert await run(world, sid, "/rename    ") == "Usage: /rename <title>"
    assert world.registry.require(sid).session.title is None
    assert world.sink.of_type(SessionTitleChanged) == []


async def test_model_without_argument_lists_the_choices(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/model")
    assert text.splitlines() == ["The model is m1. Choices:", "- `m1`: M1 (current)", "- `m2`: M2"]
    assert world.sink.of_type(ConfigOptionsChanged) == []


async def test_model_with_a_valid_id_switches_and_tells_the_client(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/model m2")
    assert text == "The model is now M2 (m2)."
    session = world.registry.require(sid).session
    assert session.model == "m2"
    assert world.uow.sessions.stored[sid].settings["model"] == "m2"  # type: ignore[index]
    (changed,) = world.sink.of_type(ConfigOptionsChanged)
    assert isinstance(changed, ConfigOptionsChanged)
    assert changed.options == world.catalog.options_for(session.settings)
    assert world.sink.of_type(ModeChanged) == []
    # The next request uses it.
    world.llm.scripts = [reply("ok")]
    await world.prompt().execute(ask(sid))
    assert world.llm.requests[0].model == "m2"


async def test_model_with_an_unknown_id_changes_nothing_and_lists_the_choices(
    world: World,
) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/model gpt-9")
    lines = text.splitlines()
    assert "gpt-9" in lines[0] and "model" in lines[0]
    assert lines[-3:] == ["The model is m1. Choices:", "- `m1`: M1 (current)", "- `m2`: M2"]
    assert world.registry.require(sid).session.model == "m1"
    assert world.sink.of_type(ConfigOptionsChanged) == []


async def test_mode_without_argument_lists_the_modes(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/mode")
    lines = text.splitlines()
    assert lines[0] == "The mode is default. Choices:"
    assert lines[1:] == [
        f"- `{m.id}`: {m.name}" + (" (current)" if m.id == "default" else "")
        for m in offered_modes(allow_bypass=True)
    ]


async def test_mode_with_a_valid_id_switches_and_tells_the_client(world: World) -> None:
    sid = await open_session(world)
    assert await run(world, sid, "/mode plan") == "The mode is now Plan (plan)."
    assert world.registry.require(sid).session.mode_id == "plan"
    assert world.sink.of_type(ModeChanged) == [ModeChanged(mode_id="plan")]
    assert len(world.sink.of_type(ConfigOptionsChanged)) == 1


async def test_mode_with_an_unknown_id_changes_nothing(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/mode chaos")
    assert "chaos" in text.splitlines()[0]
    assert "The mode is default. Choices:" in text
    assert world.registry.require(sid).session.mode_id == "default"
    assert world.sink.of_type(ModeChanged) == []
    assert world.sink.of_type(ConfigOptionsChanged) == []


async def test_usage_reports_tokens_context_and_cost(world: World) -> None:
    prices = Prices(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    world.catalog = Catalog(
        modes=offered_modes(allow_bypass=True),
        models=(ModelInfo(id="m1", name="M1", context_window=100_000, prices=prices),),
    )
    sid = await open_session(world)
    world.llm.scripts = [
        reply(
            "ok",
            usage=Usage(
                input_tokens=10_000,
                output_tokens=2_000,
                cache_read_tokens=3_000,
                cache_write_tokens=500,
            ),
        )
    ]
    await world.prompt().execute(ask(sid))

    text = await run(world, sid, "/usage")

    # (10,000 * 3 + 2,000 * 15 + 3,000 * 0.3 + 500 * 3.75) per million: 0.0628 (rounded).
    assert text.splitlines() == [
        "Tokens used in this session: 15,500 "
        "(input 10,000, output 2,000, cache read 3,000, cache write 500)",
        "Context: about 15,500 of 100,000 tokens (16%) for m1",
        "Cost: 0.0628 USD",
    ]
    update = world.sink.of_type(UsageUpdated)[-1]
    assert isinstance(update, UsageUpdated)
    assert (update.used, update.size, update.currency) == (15_500, 100_000, "USD")
    assert update.cost == pytest.approx((10_000 * 3 + 2_000 * 15 + 3_000 * 0.3 + 500 * 3.75) / 1e6)


async def test_usage_without_prices_says_the_cost_is_unknown(world: World) -> None:
    sid = await open_session(world)
    text = await run(world, sid, "/usage")
    lines = text.splitlines()
    assert lines[0].startswith("Tokens used in this session: 0 ")
    assert lines[2] == "Cost: not known (no prices for m1)"


async def test_clear_stores_a_marker_and_the_model_forgets(world: World) -> None:
    sid = await open_session(world)
    world.llm.scripts = [reply("first answer"), reply("second answer")]
    await world.prompt().execute(ask(sid, "first question"))
    events_before = len(world.sink.events)

    result = await world.prompt().execute(ask(sid, "/clear"))

    assert result.stop_reason is StopReason.END_TURN
    command, marker = stored(world, sid)[-2:]
    assert command.kind is MessageKind.COMMAND
    assert marker.kind is MessageKind.CLEAR and marker.visible_text() == CLEARED
    session = world.registry.require(sid).session
    overhead = world.requests().overhead(session)
    assert [e for _, e in world.sink.events[events_before:]] == [
        Notice(message_id=marker.id, text=CLEARED),
        PlanUpdated(entries=()),
        UsageUpdated(used=overhead, size=200_000),
    ]

    await world.prompt().execute(ask(sid, "second question"))
    assert [m.visible_text() for m in world.llm.requests[-1].messages] == ["second question"]
