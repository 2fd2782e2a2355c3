"""Turns of one session across replicas: exited holders, nudged cancels, deleted sessions."""

import asyncio

import pytest

from application.errors import SessionBusy, SessionNotFound
from application.runtime.turn_control import TurnControl
from application.sessions.load_session import LoadSessionRequest
from application.sessions.turn_lease import LeaseTerms, TurnLeasing
from domain.ids import SessionId
from domain.stop_reason import StopReason
from tests.unit.application.test_prompt import ask, open_session, reply
from tests.unit.application.turn_leases.support import (
    ELSEWHERE,
    interrupted_session,
    leases_of,
    taken_elsewhere,
)
from tests.unit.application.world import World


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
