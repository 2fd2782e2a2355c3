"""Turns of one session across processes: the turn's lease, a cancel asked elsewhere, and
a copy brought up to date when another process changed the session."""

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta

import pytest

from application.errors import ModelUnavailable, SessionBusy, SessionNotFound, StorageError
from application.ports.leases import LeaseState
from application.ports.llm import ModelRequest, TextChunk
from application.runtime.turn_control import TurnControl
from application.sessions.load_session import LoadSessionRequest
from application.sessions.settings import SetModeRequest
from application.sessions.turn_lease import LeaseTerms, TurnLeasing
from domain.content import TextBlock
from domain.events import TextDelta
from domain.ids import SessionId, ToolCallId
from domain.message import Message, Role
from domain.spawn import Spawn
from domain.stop_reason import StopReason
from tests.factories import MessageFactory, SessionFactory
from tests.fakes.leases import InMemoryTurnLeases
from tests.unit.application.conftest import World
from tests.unit.application.test_prompt import ask, hang, open_session, reply

ELSEWHERE = "there"


async def eventually(condition: Callable[[], bool], bound: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0.005)


def leases_of(world: World) -> InMemoryTurnLeases:
    assert world.leases is not None
    return world.leases


async def taken_elsewhere(world: World, sid: str) -> None:
    now = world.lease_clock.now()
    assert await leases_of(world).acquire(
        SessionId(sid), ELSEWHERE, now, now + timedelta(seconds=30)
    )


async def partial_then_hang(_: ModelRequest) -> AsyncIterator:
    yield TextChunk(text="Partial ")
    await asyncio.Event().wait()
    yield TextChunk(text="never")


async def test_a_turn_holds_the_lease_until_it_ends(leased: World) -> None:
    leased.llm.scripts = [hang]
    sid = await open_session(leased)
    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await leased.llm.started.wait()
    now = leased.lease_clock.now()
    assert await leases_of(leased).live_holder(SessionId(sid), now) == "here"
    leased.cancel().execute(sid)
    assert (await running).stop_reason is StopReason.CANCELLED
    assert await leases_of(leased).live_holder(SessionId(sid), now) is None


async def test_a_turn_running_elsewhere_makes_the_prompt_busy(leased: World) -> None:
    leased.llm.scripts = [reply("Hi")]
    sid = await open_session(leased)
    await taken_elsewhere(leased, sid)
    with pytest.raises(SessionBusy):
        await leased.prompt().execute(ask(sid))
    assert leased.uow.sessions.messages[sid] == []  # nothing of the refused prompt stored
    assert not leased.registry.is_busy(sid)
    await leases_of(leased).release(SessionId(sid), ELSEWHERE)
    assert (await leased.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN


async def test_a_lapsed_lease_of_another_process_is_taken_over(leased: World) -> None:
    leased.llm.scripts = [reply("Hi")]
    sid = await open_session(leased)
    await taken_elsewhere(leased, sid)
    leased.lease_clock.advance(30)  # the other process died: it renews no more
    assert (await leased.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN


async def test_a_cancel_asked_elsewhere_ends_the_turn_cancelled(leased: World) -> None:
    leased.llm.scripts = [partial_then_hang, reply("after")]
    sid = await open_session(leased)
    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await eventually(lambda: bool(leased.sink.of_type(TextDelta)))
    # What session/cancel on another process does: the turn is not running there.
    assert await leases_of(leased).request_cancel(SessionId(sid), leased.lease_clock.now())
    result = await asyncio.wait_for(running, 5)
    assert result.stop_reason is StopReason.CANCELLED
    stored = leased.uow.sessions.messages[sid]
    assert stored[-1].interrupted and stored[-1].visible_text() == "Partial "  # as a local cancel
    # The next turn starts with no cancel pending.
    assert (await leased.prompt().execute(ask(sid, "again"))).stop_reason is StopReason.END_TURN


async def test_a_lost_lease_cancels_the_turn(leased: World) -> None:
    leased.llm.scripts = [hang]
    sid = await open_session(leased)
    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await leased.llm.started.wait()
    leases_of(leased).leases[SessionId(sid)].holder = ELSEWHERE  # taken over meanwhile
    assert (await asyncio.wait_for(running, 5)).stop_reason is StopReason.CANCELLED
    # Not ours to release: the other holder keeps it.
    now = leased.lease_clock.now()
    assert await leases_of(leased).live_holder(SessionId(sid), now) == ELSEWHERE


async def test_the_lease_is_renewed_while_the_turn_runs(leased: World) -> None:
    leased.lease_terms = LeaseTerms(holder="here", seconds=0.06, poll=0.01)
    leased.llm.scripts = [hang]
    sid = await open_session(leased)
    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await leased.llm.started.wait()
    lease = leases_of(leased).leases[SessionId(sid)]
    first = lease.expires_at
    leased.lease_clock.advance(0.05)  # short of its end: a renewal moves the end on
    await eventually(lambda: lease.expires_at > first)
    leased.lease_clock.advance(0.05)
    await eventually(lambda: lease.expires_at > first + timedelta(seconds=0.05))
    assert not running.done()
    leased.cancel().execute(sid)
    await running


async def test_a_turn_rides_out_a_store_outage_of_its_lease(
    leased: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renewals and polls fail for a while (the database is away): the watcher goes on, and
    once the store is back it renews again and sees a cancel asked elsewhere. The turn's
    end gives the lease up even if that fails too."""
    leased.lease_terms = LeaseTerms(holder="here", seconds=0.06, poll=0.01)
    leased.llm.scripts = [hang]
    sid = SessionId(await open_session(leased))
    leases = leases_of(leased)
    failures = 0

    async def away(*args: object) -> LeaseState:
        nonlocal failures
        failures += 1
        raise StorageError("The database is unreachable.")

    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await leased.llm.started.wait()
    with monkeypatch.context() as outage:
        outage.setattr(leases, "renew", away)
        outage.setattr(leases, "check", away)
        await eventually(lambda: failures >= 3)
    lease = leases.leases[sid]
    first = lease.expires_at
    leased.lease_clock.advance(0.05)
    await eventually(lambda: lease.expires_at > first)  # renewed once the store is back
    assert await leases.request_cancel(sid, leased.lease_clock.now())
    with monkeypatch.context() as outage:
        outage.setattr(leases, "release", away)
        result = await asyncio.wait_for(running, 5)
    assert result.stop_reason is StopReason.CANCELLED


async def test_the_lease_is_released_when_the_turn_fails(leased: World) -> None:
    leased.llm.scripts = [ModelUnavailable("down")]
    sid = await open_session(leased)
    with pytest.raises(ModelUnavailable):
        await leased.prompt().execute(ask(sid))
    assert SessionId(sid) not in leases_of(leased).leases


async def test_a_command_turn_holds_the_lease_too(leased: World) -> None:
    sid = await open_session(leased)
    await taken_elsewhere(leased, sid)
    with pytest.raises(SessionBusy):
        await leased.prompt().execute(ask(sid, "/rename Elsewhere"))


async def test_cancel_here_stops_the_local_turn_without_the_store(leased: World) -> None:
    leased.llm.scripts = [hang]
    sid = await open_session(leased)
    running = asyncio.create_task(leased.prompt().execute(ask(sid)))
    await leased.llm.started.wait()
    await leased.cancel().anywhere(sid)
    assert (await running).stop_reason is StopReason.CANCELLED
    assert SessionId(sid) not in leases_of(leased).leases


async def test_cancel_of_a_turn_elsewhere_is_asked_through_its_lease(leased: World) -> None:
    sid = await open_session(leased)  # open here too, but idle here
    await taken_elsewhere(leased, sid)
    await leased.cancel().anywhere(sid)
    assert leases_of(leased).leases[SessionId(sid)].cancel_requested
    await leased.cancel().anywhere("sess_unknown")  # ignored, as today


def stored_elsewhere(world: World, sid: str, *messages: Message) -> None:
    """Another process appends messages to the session and stores them (a new version)."""
    stored = world.uow.sessions.stored[SessionId(sid)]
    stored.messages.extend(messages)
    stored.version += 1


def said(text: str) -> Message:
    return MessageFactory(content=(TextBlock(text=text),))


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


def interrupted_session(cwd: str = "/p", spawn: Spawn | None = None):  # type: ignore[no-untyped-def]
    """A turn cut off by a crash while its tool ran: the tool use has no result."""
    session = SessionFactory(cwd=cwd, spawn=spawn)
    session.add_message(MessageFactory())
    session.add_message(MessageFactory(asking_tool=True))
    return session


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


def test_a_lease_is_renewed_thrice_per_length_and_polled_at_most_that_long() -> None:
    assert LeaseTerms(holder="h", seconds=30, poll=0.5).renew_every == 10
    assert LeaseTerms(holder="h", seconds=30, poll=0.5).poll_every == 0.5
    assert LeaseTerms(holder="h", seconds=0.9, poll=0.5).poll_every == pytest.approx(0.3)


async def test_streaming_writes_nothing_to_the_lease(leased: World) -> None:
    chunks = [TextChunk(text=f"{n} ") for n in range(300)]
    leased.llm.scripts = [[*chunks, *reply("end")]]
    sid = await open_session(leased)
    assert (await leased.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN
    assert leases_of(leased).renewals == 0  # renewed every 10 s, not per delta


async def test_a_session_deleted_elsewhere_is_not_found_rather_than_busy(leased: World) -> None:
    sid = await open_session(leased)  # still open here
    del leased.uow.sessions.stored[SessionId(sid)]  # another replica deleted it
    with pytest.raises(SessionNotFound):
        await leased.prompt().execute(ask(sid))
    assert not leased.registry.is_busy(sid)


async def test_the_lease_of_a_replica_known_to_have_exited_is_taken_at_once(
    leased: World,
) -> None:
    session = interrupted_session()
    await leased.uow.sessions.add(session)
    await taken_elsewhere(leased, session.id)
    leased.presence.exited.add(ELSEWHERE)  # e.g. its lock file on this machine is free
    await leased.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert len(leased.uow.sessions.messages[session.id]) == 3  # the repair is stored
    leased.llm.scripts = [reply("Carrying on")]
    assert (await leased.prompt().execute(ask(session.id))).stop_reason is StopReason.END_TURN


async def test_a_replica_not_known_to_have_exited_keeps_its_lease(leased: World) -> None:
    sid = await open_session(leased)
    await taken_elsewhere(leased, sid)
    leased.presence.exited.add("someone-else")
    with pytest.raises(SessionBusy):
        await leased.prompt().execute(ask(sid))


async def test_a_cancel_of_a_turn_on_another_replica_nudges_its_holder(leased: World) -> None:
    sid = await open_session(leased)
    await taken_elsewhere(leased, sid)
    leasing = leased.leasing()
    assert leasing is not None
    nudged: list[tuple[str, str]] = []

    async def nudge(holder: str, session_id: SessionId) -> None:
        nudged.append((holder, session_id))

    leasing.nudge_with(nudge)
    assert await leasing.request_cancel(SessionId(sid))
    assert leases_of(leased).leases[SessionId(sid)].cancel_requested  # the flag: the safety net
    assert nudged == [(ELSEWHERE, sid)]


async def test_a_poke_makes_the_holder_see_a_cancel_before_its_next_poll(leased: World) -> None:
    sid = SessionId(await open_session(leased))
    leases = leases_of(leased)
    # Polls far apart: within the test's bound, only the poke can make it look.
    terms = LeaseTerms(holder="here", seconds=3_000, poll=1_000)
    leasing = TurnLeasing(
        leases=leases, clock=leased.lease_clock, terms=terms, presence=leased.presence
    )
    control = TurnControl()
    held = await leasing.hold(sid, control)
    assert await leases.request_cancel(sid, leased.lease_clock.now())
    await asyncio.sleep(0.05)
    assert not control.cancelled.is_set()  # not seen until its next poll...

    leasing.poke(sid)  # ...or a nudge from the replica that asked

    await asyncio.wait_for(control.cancelled.wait(), 5)
    await held.release()
    leasing.poke(sid)  # released: nothing to look at
