"""Turns of one session across processes: the turn's lease, held, renewed, lost and released,
and a cancel asked elsewhere."""

import asyncio
from datetime import timedelta

import pytest

from application.errors import ModelUnavailable, SessionBusy, StorageError
from application.ports.leases import LeaseState
from application.ports.llm import TextChunk
from application.sessions.turn_lease import LeaseTerms
from domain.events import TextDelta
from domain.ids import SessionId
from domain.stop_reason import StopReason
from tests.unit.application.test_prompt import ask, hang, open_session, reply
from tests.unit.application.turn_leases.support import (
    ELSEWHERE,
    eventually,
    leases_of,
    partial_then_hang,
    taken_elsewhere,
)
from tests.unit.application.world import World


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
