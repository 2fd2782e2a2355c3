"""Turns of one session across processes: a copy brought up to date when another process
changed the session, and repairs stored only when safe."""

import pytest

from application.sessions.load_session import LoadSessionRequest
from application.sessions.settings import SetModeRequest
from domain.content import TextBlock
from domain.events import TextDelta
from domain.ids import SessionId, ToolCallId
from domain.message import Role
from domain.spawn import Spawn
from domain.stop_reason import StopReason
from tests.factories import MessageFactory, SessionFactory
from tests.unit.application.test_prompt import ask, open_session, reply
from tests.unit.application.turn_leases.support import (
    ELSEWHERE,
    interrupted_session,
    leases_of,
    said,
    stored_elsewhere,
    taken_elsewhere,
)
from tests.unit.application.world import World


async def test_a_turn_starts_from_what_another_process_stored(leased: World) -> None:
    leased.llm.scripts = [reply("first"), reply("second")]
    sid = await open_session(leased)
    await leased.prompt().execute(ask(sid, "one"))
    stored_elsewhere(leased, sid, said("written on the other replica"))
    await leased.prompt().execute(ask(sid, "two"))
    sent = [m.visible_text() for m in leased.llm.requests[1].messages]
    assert "written on the other replica" in "".join(sent)
    active = leased.registry.require(sid)
    assert active.session.version == leased.uow.sessions.stored[SessionId(sid)].version
    assert [m.visible_text() for m in active.session.messages][-2:] == ["two", "second"]


async def test_a_current_copy_is_not_read_again(leased: World) -> None:
    leased.llm.scripts = [reply("first"), reply("second")]
    sid = await open_session(leased)
    await leased.prompt().execute(ask(sid, "one"))
    copy = leased.registry.require(sid).session
    await leased.prompt().execute(ask(sid, "two"))
    assert leased.registry.require(sid).session is copy


async def test_load_and_resume_of_an_open_session_show_what_is_stored(leased: World) -> None:
    leased.llm.scripts = [reply("first")]
    sid = await open_session(leased)
    await leased.prompt().execute(ask(sid, "one"))
    cwd = leased.registry.require(sid).session.cwd
    stored_elsewhere(leased, sid, said("from the other replica"))
    state = await leased.resume().execute(sid, cwd)
    assert state.session_id == sid
    texts = [m.visible_text() for m in leased.registry.require(sid).session.messages]
    assert texts[-1] == "from the other replica"
    stored_elsewhere(leased, sid, said("and another"))
    await leased.load().execute(LoadSessionRequest(session_id=sid, cwd=cwd))
    replayed = [e.text for e in leased.sink.of_type(TextDelta)]
    assert replayed[-1] == "first"  # the replay's assistant text; the user's come as blocks
    texts = [m.visible_text() for m in leased.registry.require(sid).session.messages]
    assert texts[-2:] == ["from the other replica", "and another"]


async def test_load_while_the_turn_runs_elsewhere_repairs_only_in_memory(leased: World) -> None:
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    await taken_elsewhere(leased, session.id)  # still running there: it may yet append
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert len(leased.uow.sessions.messages[session.id]) == 2  # nothing stored
    opened = leased.registry.require(session.id).session
    assert len(opened.messages) == 3 and opened.messages[-1].tool_results[0].is_error
    assert opened.version is None  # repaired in memory only: no stored version holds it
    # The other process finishes its turn: the next turn here reads what it stored.
    stored_elsewhere(leased, session.id, MessageFactory(tool_answer=True))
    await leases_of(leased).release(session.id, ELSEWHERE)
    leased.llm.scripts = [reply("Done")]
    await leased.prompt().execute(ask(session.id, "next"))
    results = leased.llm.requests[0].messages[2].tool_results
    assert results[0].content == "print('a')" and not results[0].is_error


async def test_a_sub_agents_session_is_repaired_only_in_memory(leased: World) -> None:
    """Its run alone writes it, and may still be appending: a load never stores over it."""
    session = interrupted_session(
        spawn=Spawn(
            parent_id=SessionId("sess_parent"),
            tool_call_id=ToolCallId("toolu_a"),
            agent="researcher",
        )
    )
    await leased.uow.sessions.add(session)
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert len(leased.uow.sessions.messages[session.id]) == 2  # nothing stored
    opened = leased.registry.require(session.id).session
    assert len(opened.messages) == 3 and opened.version is None


async def test_load_after_the_lease_lapsed_stores_the_repair(leased: World) -> None:
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    await taken_elsewhere(leased, session.id)
    leased.lease_clock.advance(30)  # that process died mid-turn
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    stored = leased.uow.sessions.messages[session.id]
    assert len(stored) == 3 and stored[-1].tool_results[0].is_error
    leased.llm.scripts = [reply("Carrying on")]
    assert (await leased.prompt().execute(ask(session.id))).stop_reason is StopReason.END_TURN


async def test_a_load_does_not_store_its_repair_over_a_turn_stored_since_it_read(
    leased: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    leases = leases_of(leased)
    free = leases.live_holder

    async def a_whole_turn_ran_elsewhere_meanwhile(*args: object) -> str | None:
        monkeypatch.undo()  # once
        stored_elsewhere(leased, session.id, MessageFactory(tool_answer=True), said("later"))
        return await free(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(leases, "live_holder", a_whole_turn_ran_elsewhere_meanwhile)
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    stored = leased.uow.sessions.messages[session.id]
    assert [m.visible_text() for m in stored][-1] == "later"  # not undone by the repair
    opened = leased.registry.require(session.id).session
    assert opened.messages == tuple(stored)  # read again: what that turn stored
    assert opened.version == leased.uow.sessions.stored[session.id].version
    leased.llm.scripts = [reply("Carrying on")]
    await leased.prompt().execute(ask(session.id, "next"))
    assert "later" in leased.llm.requests[0].messages[-1].visible_text()


async def test_a_repair_racing_a_rename_elsewhere_is_stored_on_the_renamed_session(
    leased: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rename (another process: the CLI) lands between the load's read and its
    # rewrite: the rewrite conflicts, and the load repairs what is stored now.
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    leases = leases_of(leased)
    free = leases.live_holder
    renames = 0

    async def renamed_meanwhile(*args: object) -> str | None:
        nonlocal renames
        if renames == 0:
            renames += 1
            leased.uow.sessions.stored[session.id].version += 1
        return await free(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(leases, "live_holder", renamed_meanwhile)
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert len(leased.uow.sessions.messages[session.id]) == 3  # the repair is stored
    opened = leased.registry.require(session.id).session
    assert opened.version == leased.uow.sessions.stored[session.id].version


async def test_a_setting_changed_on_a_copy_repaired_in_memory_leaves_the_next_turn_sound(
    leased: World,
) -> None:
    """The setting's save conflicts (the copy was repaired in memory only) and takes the
    stored session, whose turn was cut off elsewhere; that replica then dies. The next turn
    here must not send the model a tool use without its result."""
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    await taken_elsewhere(leased, session.id)
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    await leased.set_mode().execute(SetModeRequest(session_id=session.id, mode_id="plan"))
    leased.lease_clock.advance(30)  # the other replica died mid-turn
    leased.llm.scripts = [reply("Carrying on")]
    await leased.prompt().execute(ask(session.id, "next"))
    sent = leased.llm.requests[0].messages
    uses = [u.id for m in sent for u in m.tool_uses]
    answered = [r.tool_use_id for m in sent for r in m.tool_results]
    assert uses and answered == uses


async def test_a_turn_cut_off_before_any_answer_continues_sound(leased: World) -> None:
    """A crash after the prompt was stored and before any reply: the next prompt follows
    it, and the model gets a conversation it accepts (alternating, ending with the user)."""
    session = SessionFactory(cwd="/p")
    session.add_message(MessageFactory(content=(TextBlock(text="lost question"),)))
    await leased.uow.sessions.add(session)
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    leased.llm.scripts = [reply("Both answered")]
    await leased.prompt().execute(ask(session.id, "asked again"))
    sent = leased.llm.requests[0].messages
    assert [m.role for m in sent] == [Role.USER]
    assert "lost question" in sent[0].visible_text()
    assert "asked again" in sent[0].visible_text()
    stored = leased.uow.sessions.messages[session.id]
    assert [m.role for m in stored] == [Role.USER, Role.USER, Role.ASSISTANT]
