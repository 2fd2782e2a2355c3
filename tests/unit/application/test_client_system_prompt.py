"""The client's system prompt: stored with the session on every kind of open, kept when a
later open gives none, replaced when it gives another, and sent to the model."""

import pytest

from application.dto import SessionOpening
from application.errors import SessionBusy
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from domain.client_prompt import ClientPrompt, ClientPromptMode
from tests.unit.application.test_session_servers import say
from tests.unit.application.test_tools import final
from tests.unit.application.world import World

TERSE = ClientPrompt(mode=ClientPromptMode.APPEND, texts=("Answer in haiku.",))
PIRATE = ClientPrompt(mode=ClientPromptMode.OVERRIDE, texts=("You are a pirate.", "Say arr."))


def stored(world: World, sid: str) -> object:
    return world.uow.sessions.stored[sid].settings["system_prompt"]  # type: ignore[index]


async def started(world: World, prompt: ClientPrompt | None = TERSE) -> str:
    opening = SessionOpening(system_prompt=prompt)
    state = await world.new_session().execute(NewSessionRequest(cwd="/work", opening=opening))
    return state.session_id


async def test_a_new_session_stores_the_prompt_and_the_model_reads_it_last(world: World) -> None:
    sid = await started(world)
    assert stored(world, sid) == TERSE
    world.llm.scripts = [final()]
    await say(world, sid, "hello")
    system = world.llm.requests[0].system
    assert system.startswith("You are iac-code")
    assert system.endswith("Answer in haiku.")


async def test_override_replaces_the_agents_own_words_and_keeps_its_safety(world: World) -> None:
    sid = await started(world, PIRATE)
    world.llm.scripts = [final()]
    await say(world, sid, "hello")
    system = world.llm.requests[0].system
    assert system.startswith("You are a pirate.\n\nSay arr.\n\n## Safety")
    assert "You are iac-code" not in system
    assert "## Mode:" in system


async def test_without_a_prompt_nothing_is_stored_and_the_request_is_as_before(
    world: World,
) -> None:
    sid = await started(world, None)
    assert stored(world, sid) is None
    world.llm.scripts = [final()]
    await say(world, sid, "hello")
    assert "## From the editor" not in world.llm.requests[0].system


async def test_a_load_or_resume_without_a_prompt_keeps_the_stored_one(world: World) -> None:
    sid = await started(world)
    await world.close().execute(sid)
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    await world.resume().execute(sid, "/work")
    assert stored(world, sid) == TERSE
    assert world.registry.require(sid).session.system_prompt == TERSE


async def test_a_load_or_resume_with_another_prompt_replaces_it(world: World) -> None:
    sid = await started(world)
    await world.load().execute(
        LoadSessionRequest(
            session_id=sid, cwd="/work", opening=SessionOpening(system_prompt=PIRATE)
        )
    )
    assert stored(world, sid) == PIRATE
    await world.resume().execute(sid, "/work", SessionOpening(system_prompt=TERSE))
    assert stored(world, sid) == TERSE
    assert world.registry.require(sid).session.system_prompt == TERSE


async def test_a_fork_keeps_the_sources_prompt_unless_it_gives_its_own(world: World) -> None:
    sid = await started(world)
    kept = await world.fork().execute(sid, "/work")
    assert stored(world, kept.session_id) == TERSE
    given = await world.fork().execute(sid, "/work", SessionOpening(system_prompt=PIRATE))
    assert stored(world, given.session_id) == PIRATE
    assert stored(world, sid) == TERSE


async def test_a_running_turn_keeps_its_prompt(world: World) -> None:
    sid = await started(world)
    world.registry.require(sid).begin_turn()  # a prompt is running
    await world.resume().execute(sid, "/work", SessionOpening(system_prompt=TERSE))  # same
    await world.resume().execute(sid, "/work")  # none given: kept
    with pytest.raises(SessionBusy):
        await world.resume().execute(sid, "/work", SessionOpening(system_prompt=PIRATE))
    assert stored(world, sid) == TERSE
