"""The room for the shared session: closing, clients already gone, handlers waiting, deletion,
and clients attached on other replicas (issue 32)."""

import asyncio

import pytest

from application.attachments.ownership import NotAttached
from application.attachments.room import Attachments
from application.errors import (
    SessionNotFound,
)
from tests.fakes.clients import FakeClient, FakeSessions, ManualTimers
from tests.unit.application.attachments_room.support import SID, clients


def test_close_by_the_last_client_closes_and_by_another_only_detaches(
    room: Attachments,
) -> None:
    a, b, anyone = clients("a", "b", "anyone")
    room.attach(SID, a)
    room.attach(SID, b)
    assert room.close_by(SID, a) is False  # b still follows it
    assert room.peers_of(SID) == [b] and room.controller_of(SID) is b
    assert room.close_by(SID, b) is True  # the last: the caller closes it
    assert room.close_by(SID, anyone) is True  # nobody attached: anyone may close it


async def test_a_close_stops_the_detached_clock(
    room: Attachments, timers: ManualTimers, sessions: FakeSessions
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)
    assert timers.live() == [42.0]
    assert room.close_by(SID, FakeClient("b")) is True  # the caller cancels the turn
    assert timers.live() == []


async def test_a_close_by_the_last_client_while_another_attaches_leaves_it_open(
    room: Attachments, sessions: FakeSessions
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    async with room.arriving(SID):  # b's resume
        assert room.close_by(SID, a) is False  # b keeps the session
    room.attach(SID, b, live=False)
    assert sessions.closed == []


async def test_a_close_by_the_last_client_is_done_when_the_other_attach_fails(
    room: Attachments, sessions: FakeSessions
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    sessions.running.add(SID)
    with pytest.raises(SessionNotFound):
        async with room.arriving(SID):
            assert room.close_by(SID, a) is False
            raise SessionNotFound()
    assert sessions.closed == [SID]  # closed (its turn cancelled), as a asked


async def test_a_client_gone_before_its_late_call_attaches_it_leaves_again(
    room: Attachments, sessions: FakeSessions
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    await room.client_gone(b)  # b's connection closed while its load was in flight
    room.attach(SID, b, live=False)  # the load goes on and attaches it
    await room.unless_gone(SID, b)
    assert room.peers_of(SID) == [a]
    room.attach("t", b)  # a session b alone followed: left alone, and idle
    await room.unless_gone("t", b)
    assert sessions.closed == ["t"]
    await room.unless_gone(SID, a)  # not gone: stays
    assert room.peers_of(SID) == [a]


async def test_a_handler_awaiting_a_turn_stops_when_its_client_goes(room: Attachments) -> None:
    (a,) = clients("a")
    waiting = asyncio.Event()

    async def handler() -> None:
        with room.waiting(a):
            waiting.set()
            await asyncio.Event().wait()  # the turn's answer

    task = asyncio.ensure_future(handler())
    await waiting.wait()
    await room.client_gone(a)
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_deleted_session_forgets_its_clients_and_its_clock(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, b = clients("a", "b")
    left: list[FakeClient] = []
    room.on_left(lambda _, client: left.append(client))  # type: ignore[arg-type]
    room.attach(SID, a)
    room.attach(SID, b)
    room.forget(SID)
    assert room.peers_of(SID) == [] and left == [a, b]
    room.check_may_act(SID, FakeClient("c"))  # free again
    room.attach("t", a)
    sessions.running.add("t")
    await room.client_gone(a)
    assert timers.live() == [42.0]
    room.forget("t")
    assert timers.live() == []


async def test_clients_attached_on_another_replica_count_as_attached(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, stranger = clients("a", "stranger")
    elsewhere = {SID}
    room.followed_elsewhere_by(lambda session_id: session_id in elsewhere)
    joined: list[str] = []
    room.on_joined(lambda session_id, client: joined.append(f"{session_id}:{client.name}"))
    with pytest.raises(NotAttached):  # nobody here, but held elsewhere: load it first
        room.check_may_act(SID, stranger)
    room.check_may_act("free", stranger)
    room.attach(SID, a)
    room.attach(SID, a)  # attaching again is no new arrival
    assert joined == [f"{SID}:a"]
    room.check_may_act(SID, a)

    sessions.running.add(SID)
    await room.client_gone(a)
    assert timers.live() == []  # followed elsewhere: the turn is not left alone
    elsewhere.clear()
    await room.nobody_elsewhere(SID)
    assert timers.live() == [42.0]  # now it is
