import pytest

from application.errors import RewindNotUndoable, SessionBusy, SessionConflict
from application.rewind.rewind import RewindSession
from application.runtime.turn_control import TurnControl
from application.turn.edit_prompt import EditPrompt
from domain.content import TextBlock
from domain.errors import UnknownMessage
from domain.events import SessionRewound, TextDelta, UserContentReplayed
from domain.message import Message
from domain.session import Session
from domain.stop_reason import StopReason
from tests.factories import MessageFactory, SessionFactory
from tests.fakes.turn import ScriptedAsker
from tests.fakes.workspace_files import InMemoryWorkspaceFiles
from tests.unit.application.test_file_checkpoints import rewind as restoring
from tests.unit.application.test_prompt import reply
from tests.unit.application.world import World


def conversation() -> tuple[Message, ...]:
    """Two turns: a prompt, a tool use and its result, a reply; a second prompt, a reply."""
    return (
        MessageFactory(id="u1"),
        MessageFactory(id="a1", asking_tool=True),
        MessageFactory(id="r1", tool_answer=True),
        MessageFactory(id="a1b", reply=True),
        MessageFactory(id="u2"),
        MessageFactory(id="a2", reply=True),
    )


async def opened(world: World) -> Session:
    session = SessionFactory(messages=list(conversation()))
    async with world.uow as uow:
        await uow.sessions.add(session)
        await uow.commit()
    return world.registry.open(session).session


def rewind(world: World) -> RewindSession:
    """A rewind that keeps the files (no file is on the fake disk; nobody is asked)."""
    return restoring(world, InMemoryWorkspaceFiles(), ScriptedAsker())


def stored_ids(world: World, session: Session) -> list[str]:
    return [m.id for m in world.uow.sessions.stored[session.id].messages]


async def test_a_rewind_cuts_before_the_prompt_stores_it_and_tells_the_clients(
    world: World,
) -> None:
    session = await opened(world)
    rewound = await rewind(world).execute(session.id, "u2")
    assert rewound.message_count == 4
    assert [m.id for m in session.messages] == ["u1", "a1", "r1", "a1b"]
    assert stored_ids(world, session) == ["u1", "a1", "r1", "a1b"]
    assert world.sink.of_type(SessionRewound) == [
        SessionRewound(to_message_id="u2", message_count=4)  # type: ignore[arg-type]
    ]
    assert not world.registry.is_busy(session.id)


async def test_only_a_prompt_the_user_sent_is_a_rewind_point(world: World) -> None:
    session = await opened(world)
    for not_a_prompt in ("a1", "r1", "nope"):
        with pytest.raises(UnknownMessage):
            await rewind(world).execute(session.id, not_a_prompt)
    assert len(session.messages) == 6 and world.sink.events == []


async def test_a_busy_session_is_not_rewound(world: World) -> None:
    session = await opened(world)
    active = world.registry.require(session.id)
    active.begin_turn()
    with pytest.raises(SessionBusy):
        await rewind(world).execute(session.id, "u1")
    assert len(session.messages) == 6 and stored_ids(world, session)[-1] == "a2"


async def test_a_rewind_the_store_refuses_leaves_the_history_as_it_was(world: World) -> None:
    session = await opened(world)
    world.uow.sessions.stored[session.id].version += 1  # written elsewhere since
    with pytest.raises(SessionConflict):
        await rewind(world).execute(session.id, "u1")
    assert [m.id for m in session.messages] == [m.id for m in conversation()]
    assert world.uow.checkpoints.undos == {}
    assert not world.registry.is_busy(session.id)


async def test_undo_brings_the_history_back_and_replays_it(world: World) -> None:
    session = await opened(world)
    rewound = await rewind(world).execute(session.id, "u2")
    assert await rewind(world).undo(session.id, rewound.undo_token) == 6
    assert stored_ids(world, session) == [m.id for m in conversation()]
    assert world.sink.of_type(SessionRewound)[-1] == SessionRewound(
        to_message_id="u2",  # type: ignore[arg-type]
        message_count=6,
        undone=True,
    )
    replayed = [e for _, e in world.sink.events if isinstance(e, UserContentReplayed | TextDelta)]
    assert [e.message_id for e in replayed] == ["u2", "a2"]
    with pytest.raises(RewindNotUndoable):  # once only
        await rewind(world).undo(session.id, rewound.undo_token)


async def test_no_undo_after_a_prompt_or_with_another_token(world: World) -> None:
    session = await opened(world)
    rewound = await rewind(world).execute(session.id, "u2")
    with pytest.raises(RewindNotUndoable):
        await rewind(world).undo(session.id, "another")
    session.add_message(MessageFactory(id="u3"))
    with pytest.raises(RewindNotUndoable, match="prompted since"):
        await rewind(world).undo(session.id, rewound.undo_token)
    assert [m.id for m in session.messages] == ["u1", "a1", "r1", "a1b", "u3"]


async def test_a_held_rewind_keeps_the_session_busy_for_the_turn_that_follows(
    world: World,
) -> None:
    session = await opened(world)
    active = world.registry.require(session.id)
    held = TurnControl()
    await rewind(world).execute(session.id, "u2", hold=held)
    assert active.turn is held
    with pytest.raises(SessionBusy):  # any other prompt is busy meanwhile
        active.begin_turn()
    assert active.begin_turn(held) is held  # the held turn itself begins


async def test_edit_prompt_runs_the_new_text_on_the_cut_history(world: World) -> None:
    session = await opened(world)
    world.llm.scripts = [reply("re: TWO")]
    edit = EditPrompt(rewind=rewind(world), prompt=world.prompt(), registry=world.registry)
    result = await edit.execute(session.id, "u2", (TextBlock(text="TWO"),))
    assert result.stop_reason is StopReason.END_TURN
    texts = [m.visible_text() for m in world.llm.requests[0].messages]
    assert texts[-1] == "TWO" and "Fix the failing test" in texts[0]
    assert [m.id for m in session.messages][:4] == ["u1", "a1", "r1", "a1b"]
    assert [m.visible_text() for m in session.messages[4:]] == ["TWO", "re: TWO"]
    assert not world.registry.is_busy(session.id)


async def test_an_edit_of_an_unknown_prompt_changes_nothing_and_leaves_the_session_free(
    world: World,
) -> None:
    session = await opened(world)
    edit = EditPrompt(rewind=rewind(world), prompt=world.prompt(), registry=world.registry)
    with pytest.raises(UnknownMessage):
        await edit.execute(session.id, "a2", (TextBlock(text="TWO"),))
    assert len(session.messages) == 6 and world.llm.requests == []
    assert not world.registry.is_busy(session.id)
