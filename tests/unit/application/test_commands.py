"""Slash commands: dispatch from a prompt, each built-in command, their storage, their replay
on load, and how clients learn which commands there are."""

import pytest

from application.commands.context import CLEARED
from application.commands.run import RunCommand
from application.runtime.command_registry import CommandInput, CommandRegistry
from application.runtime.turn_control import TurnControl
from application.sessions.load_session import LoadSessionRequest, replay_events
from application.turn.announce import AnnounceSession
from application.turn.prompt import PromptRequest
from domain.commands import CommandCall, CommandSpec
from domain.config import Catalog
from domain.content import ImageBlock, TextBlock
from domain.events import (
    CommandsAvailable,
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    ConfigOptionsChanged,
    ModeChanged,
    Notice,
    PlanUpdated,
    SessionTitleChanged,
    TextDelta,
    UsageUpdated,
    UserContentReplayed,
)
from domain.ids import MessageId
from domain.message import Compaction, Message, MessageKind, Role
from domain.models import ModelInfo, Prices
from domain.modes import offered_modes
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.factories import T0
from tests.fakes.turn import ScriptedLLM
from tests.unit.application.conftest import World
from tests.unit.application.test_prompt import ask, open_session, reply

BUILT_IN = ["compact", "clear", "rename", "model", "mode", "usage", "help"]


def stored(world: World, sid: str) -> list[Message]:
    return world.uow.sessions.messages[sid]  # type: ignore[index]


def last_notice(world: World) -> Notice:
    notice = world.sink.of_type(Notice)[-1]
    assert isinstance(notice, Notice)
    return notice


async def run(world: World, sid: str, text: str) -> str:
    """Run a command; returns the answer it stored (and showed)."""
    result = await world.prompt().execute(ask(sid, text))
    assert result.stop_reason is StopReason.END_TURN
    answer = stored(world, sid)[-1]
    assert answer.kind is MessageKind.COMMAND_OUTPUT
    assert last_notice(world) == Notice(message_id=answer.id, text=answer.visible_text())
    return answer.visible_text()


# Dispatch and storage


async def test_a_command_runs_instead_of_a_model_turn(world: World) -> None:
    sid = await open_session(world)

    result = await world.prompt().execute(ask(sid, "/help"))

    assert result.stop_reason is StopReason.END_TURN and result.usage == Usage()
    assert world.llm.requests == []
    command, answer = stored(world, sid)
    assert command.kind is MessageKind.COMMAND and command.role is Role.USER
    assert command.content == (TextBlock(text="/help"),)
    assert answer.kind is MessageKind.COMMAND_OUTPUT and answer.role is Role.ASSISTANT
    assert answer.visible_text().startswith("Slash commands")
    assert world.sink.of_type(Notice) == [Notice(message_id=answer.id, text=answer.visible_text())]
    (recorded,) = world.uow.sessions.turns
    session_id, turn, error = recorded
    assert session_id == sid and error is None
    assert turn.stop_reason is StopReason.END_TURN and turn.requests == 0
    # A command is not what the session is about: it gives no title.
    assert world.registry.require(sid).session.title is None
    assert world.sink.of_type(SessionTitleChanged) == []


async def test_commands_never_reach_the_model_not_even_later(world: World) -> None:
    sid = await open_session(world)
    await world.prompt().execute(ask(sid, "/usage"))
    world.llm.scripts = [reply("hi")]
    await world.prompt().execute(ask(sid, "hello"))
    (request,) = world.llm.requests
    assert [m.visible_text() for m in request.messages] == ["hello"]


async def test_commands_run_without_model_credentials(world: World) -> None:
    sid = await open_session(world)
    world.llm = ScriptedLLM(credentials=False)
    assert (await world.prompt().execute(ask(sid, "/help"))).stop_reason is StopReason.END_TURN


async def test_a_doubled_slash_sends_the_command_name_to_the_model(world: World) -> None:
    sid = await open_session(world)
    world.llm.scripts = [reply("It lists the commands.")]

    await world.prompt().execute(ask(sid, "//help what does it do?"))

    (request,) = world.llm.requests
    assert request.messages[0].content == (TextBlock(text="/help what does it do?"),)
    first = stored(world, sid)[0]
    assert first.is_chat and first.visible_text() == "/help what does it do?"


async def test_paths_and_unknown_names_go_to_the_model_unchanged(world: World) -> None:
    sid = await open_session(world)
    texts = ["/usr/bin/env python3 fails", "/^regex$/ matches?", "/nocommand", "/"]
    world.llm.scripts = [reply("ok") for _ in texts]
    for text in texts:
        await world.prompt().execute(ask(sid, text))
    sent = [r.messages[-1].content[0] for r in world.llm.requests]
    assert sent == [TextBlock(text=t) for t in texts]
    assert all(m.is_chat for m in stored(world, sid))


async def test_the_command_is_read_from_the_first_text_block(world: World) -> None:
    sid = await open_session(world)
    content = (ImageBlock(mime_type="image/png"), TextBlock(text="/help"))
    await world.prompt().execute(PromptRequest(session_id=sid, content=content))
    command = stored(world, sid)[0]
    assert command.kind is MessageKind.COMMAND and command.content == content
    assert world.llm.requests == []


# The built-in commands


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


async def test_a_turn_and_its_output_are_stored_for_every_command(world: World) -> None:
    sid = await open_session(world)
    for text in ["/help", "/usage", "/model", "/mode", "/rename x"]:
        await run(world, sid, text)
    kinds = [m.kind for m in stored(world, sid)]
    assert kinds == [MessageKind.COMMAND, MessageKind.COMMAND_OUTPUT] * 5
    assert len(world.uow.sessions.turns) == 5
    assert all(t.stop_reason is StopReason.END_TURN for _, t, _ in world.uow.sessions.turns)


class Unstored:
    spec = CommandSpec(name="unstored", description="Shown, never stored", stored=False)

    async def run(self, command: CommandInput) -> str:
        return f"seen {command.argument}"


async def test_a_command_whose_spec_says_unstored_is_shown_but_not_stored(world: World) -> None:
    sid = await open_session(world)
    before = list(stored(world, sid))
    runner = RunCommand(
        registry=CommandRegistry([Unstored]),
        log=world.log(),
        sink=world.sink,
        clock=world.clock,
        ids=world.ids,
    )
    session = world.registry.require(sid).session
    call = CommandCall(name="unstored", argument="it")
    result = await runner.execute(session, TurnControl(), call, (TextBlock(text="/unstored it"),))
    assert result.stop_reason is StopReason.END_TURN
    assert last_notice(world).text == "seen it"
    assert stored(world, sid) == before and session.message_count == len(before)
    assert len(world.uow.sessions.turns) == 1  # the turn is still recorded


# Replay on load


def marker(kind: MessageKind, text: str, role: Role = Role.ASSISTANT, **more: object) -> Message:
    return Message(
        id=MessageId(f"{kind.value}_1"),
        role=role,
        content=(TextBlock(text=text),),
        created_at=T0,
        kind=kind,
        **more,  # type: ignore[arg-type]
    )


def test_replay_shows_markers_as_they_were_shown_live() -> None:
    command = marker(MessageKind.COMMAND, "/usage", Role.USER)
    output = marker(MessageKind.COMMAND_OUTPUT, "Tokens used: 12")
    clear = marker(MessageKind.CLEAR, CLEARED)
    facts = Compaction(keep_from=None, tokens_before=9_000, tokens_after=800, window=10_000)
    compaction = marker(MessageKind.COMPACTION, "the secret summary", compaction=facts)

    events = replay_events((command, output, clear, compaction), {})

    assert events == [
        UserContentReplayed(message_id=command.id, block=TextBlock(text="/usage")),
        Notice(message_id=output.id, text="Tokens used: 12"),
        Notice(message_id=clear.id, text=CLEARED),
        PlanUpdated(entries=()),
        # The compaction as it went live: started, its summary, completed (with its counts).
        CompactionChanged(
            compaction_id=compaction.id,
            status=CompactionStatus.IN_PROGRESS,
            tokens_before=9_000,
            window=10_000,
        ),
        CompactionSummaryDelta(compaction_id=compaction.id, text="the secret summary"),
        CompactionChanged(
            compaction_id=compaction.id,
            status=CompactionStatus.COMPLETED,
            tokens_before=9_000,
            tokens_after=800,
            window=10_000,
        ),
    ]


async def test_a_loaded_session_replays_its_commands_and_keeps_its_context(world: World) -> None:
    sid = await open_session(world)
    world.llm.scripts = [reply("first answer"), reply("after load")]
    await world.prompt().execute(ask(sid, "first question"))
    await world.prompt().execute(ask(sid, "/help"))
    await world.prompt().execute(ask(sid, "/clear"))
    live = list(world.sink.events)
    await world.close().execute(sid)
    world.sink.events.clear()

    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/home/dev/p"))

    replayed = [e for _, e in world.sink.events]
    live_notices = [e for _, e in live if isinstance(e, Notice)]
    assert [e for e in replayed if isinstance(e, Notice)] == live_notices
    assert [e for e in replayed if isinstance(e, UserContentReplayed)] == [
        UserContentReplayed(message_id=m.id, block=m.content[0])
        for m in stored(world, sid)
        if m.role is Role.USER
    ]
    assert replayed[-1] == PlanUpdated(entries=())
    assert [e.text for e in replayed if isinstance(e, TextDelta)] == ["first answer"]
    # The loaded session's model still sees nothing before the /clear.
    await world.prompt().execute(ask(sid, "next"))
    assert [m.visible_text() for m in world.llm.requests[-1].messages] == ["next"]


# What clients learn


async def test_announce_sends_the_commands_and_the_context_size(world: World) -> None:
    sid = await open_session(world)
    await world.announce().execute(sid)
    session = world.registry.require(sid).session
    assert [e for _, e in world.sink.events] == [
        CommandsAvailable(commands=world.commands().specs()),
        UsageUpdated(used=world.requests().overhead(session), size=200_000),
    ]
    assert {s for s, _ in world.sink.events} == {sid}


async def test_announce_for_a_session_not_open_sends_nothing(world: World) -> None:
    await world.announce().execute("sess_unknown")
    assert world.sink.events == []


class Echo:
    spec = CommandSpec(name="echo", description="Say it back", hint="text")

    async def run(self, command: CommandInput) -> str:
        return command.argument


async def test_adding_a_command_tells_every_open_session(world: World) -> None:
    first, second = await open_session(world), await open_session(world)
    await world.close().execute(first)
    registry = world.commands()
    announce = AnnounceSession(
        sessions=world.registry,
        sink=world.sink,
        model=world.model_side(),
        servers=world.servers(registry),
        briefer=world.briefer(),
        catalog=world.catalog,
        tasks=world.background_tasks(),
    )
    registry.subscribe(announce.commands_changed)  # as bootstrap/container.py wires it

    await registry.add(Echo)

    assert "echo" in registry.names
    assert [(s, e) for s, e in world.sink.events] == [
        (second, CommandsAvailable(commands=registry.specs()))
    ]
    assert registry.specs()[-1] == Echo.spec


async def test_the_registry_notifies_listeners_of_additions_only() -> None:
    heard: list[frozenset[str]] = []
    registry = CommandRegistry([Echo])

    async def listener() -> None:
        heard.append(registry.names)

    registry.subscribe(listener)
    registry.subscribe(listener)

    class Other(Echo):
        spec = CommandSpec(name="other", description="Another")

    registry.register(Other)  # before any session: nobody to tell
    assert heard == []
    await registry.add(Echo)  # a command of the same name replaces it
    assert heard == [frozenset({"echo", "other"})] * 2
    assert registry.get("missing") is None
    made = registry.get("echo")
    assert isinstance(made, Echo) and made is not registry.get("echo")  # made afresh each use


async def test_code_that_starts_with_a_double_slash_comment_reaches_the_model_unchanged(
    world: World,
) -> None:
    # Only `//name` of a command is an escape; a pasted `// comment` is the user's text.
    sid = await open_session(world)
    pasted = "// Why does this loop never end?\nfor (;;) {}"
    world.llm.scripts = [reply("It has no condition.")]

    await world.prompt().execute(ask(sid, pasted))

    (request,) = world.llm.requests
    assert request.messages[0].content == (TextBlock(text=pasted),)
    assert stored(world, sid)[0].content == (TextBlock(text=pasted),)


class Broken:
    spec = CommandSpec(name="broken", description="Always fails")

    async def run(self, command: CommandInput) -> str:
        raise RuntimeError("disk on fire")


async def test_a_command_that_fails_keeps_its_prompt_and_records_the_error(world: World) -> None:
    sid = await open_session(world)
    runner = RunCommand(
        registry=CommandRegistry([Broken]),
        log=world.log(),
        sink=world.sink,
        clock=world.clock,
        ids=world.ids,
    )
    session = world.registry.require(sid).session
    with pytest.raises(RuntimeError):
        await runner.execute(
            session,
            TurnControl(),
            CommandCall(name="broken", argument=""),
            (TextBlock(text="/broken"),),
        )
    (_sid, _turn, error) = world.uow.sessions.turns[-1]
    assert error == "/broken failed: disk on fire"
    [prompt] = stored(world, sid)
    assert prompt.kind is MessageKind.COMMAND
