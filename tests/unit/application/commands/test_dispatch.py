"""Slash commands: dispatch from a prompt, and the turn and output stored for each."""

import pytest

from application.commands.run import RunCommand
from application.runtime.command_registry import CommandInput, CommandRegistry
from application.runtime.turn_control import TurnControl
from application.turn.prompt import PromptRequest
from domain.commands import CommandCall, CommandSpec
from domain.content import ImageBlock, TextBlock
from domain.events import (
    Notice,
    SessionTitleChanged,
)
from domain.message import MessageKind, Role
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.fakes.turn import ScriptedLLM
from tests.unit.application.commands.support import last_notice, run, stored
from tests.unit.application.test_prompt import ask, open_session, reply
from tests.unit.application.world import World


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
