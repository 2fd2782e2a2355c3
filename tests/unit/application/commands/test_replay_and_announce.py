"""Slash commands replayed on load, and what clients learn of the commands there are."""

from application.commands.context import CLEARED
from application.runtime.command_registry import CommandInput, CommandRegistry
from application.sessions.load_session import LoadSessionRequest, replay_events
from application.turn.announce import AnnounceSession
from domain.commands import CommandSpec
from domain.content import TextBlock
from domain.events import (
    CommandsAvailable,
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    Notice,
    PlanUpdated,
    TextDelta,
    UsageUpdated,
    UserContentReplayed,
)
from domain.ids import MessageId
from domain.message import Compaction, Message, MessageKind, Role
from tests.factories import T0
from tests.unit.application.commands.support import stored
from tests.unit.application.test_prompt import ask, open_session, reply
from tests.unit.application.world import World


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
