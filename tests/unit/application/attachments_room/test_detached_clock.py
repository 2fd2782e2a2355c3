"""The room for the shared session: the last client leaving, the detached clock, and attaches
under way meanwhile."""

import pytest

from application.attachments.room import Attachments
from application.errors import SessionNotFound
from tests.fakes.clients import FakeClient, FakeSessions, ManualTimers
from tests.unit.application.attachments_room.support import SID, clients, settle


async def test_the_last_client_leaving_an_idle_session_closes_it(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    await room.client_gone(a)
    assert sessions.closed == [] and room.controller_of(SID) is b
    await room.client_gone(b)
    assert sessions.closed == [SID] and timers.live() == []


async def test_the_last_client_leaving_a_running_turn_starts_the_detached_clock(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)
    assert sessions.closed == [] and timers.live() == [42.0]  # the turn goes on
    timers.fire()  # nobody came back in time
    await settle()
    assert sessions.closed == [SID]


async def test_a_client_coming_back_in_time_stops_the_clock(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)
    async with room.arriving(SID):
        assert timers.live() == []  # stopped as the attach begins, not once it is done
    room.attach(SID, b, live=False)
    timers.fire()
    await settle()
    assert sessions.closed == []


async def test_the_deadline_passing_with_a_client_attached_closes_nothing(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)
    room.attach(SID, b)
    timers.fire()
    await settle()
    assert sessions.closed == []


async def test_an_attach_under_way_when_the_last_client_leaves_keeps_the_session(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    async with room.arriving(SID):  # b's load reads the session meanwhile
        await room.client_gone(a)
        assert sessions.closed == []  # b is about to be given it
    room.attach(SID, b, live=False)
    assert sessions.closed == [] and timers.live() == []
    await room.client_gone(b)  # b leaves in turn: closed as usual
    assert sessions.closed == [SID]


async def test_a_failed_attach_after_the_last_client_left_closes_the_idle_session(
    room: Attachments, sessions: FakeSessions
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    with pytest.raises(SessionNotFound):
        async with room.arriving(SID):
            await room.client_gone(a)
            raise SessionNotFound()
    assert sessions.closed == [SID]


async def test_a_failed_attach_gives_a_turn_left_alone_its_clock_again(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)
    with pytest.raises(SessionNotFound):
        async with room.arriving(SID):
            assert timers.live() == []
            raise SessionNotFound()
    assert timers.live() == [42.0] and sessions.closed == []


async def test_a_failed_attach_while_another_is_under_way_decides_nothing_yet(
    room: Attachments, sessions: FakeSessions
) -> None:
    (a,) = clients("a")
    room.attach(SID, a)
    async with room.arriving(SID):  # b's attach
        with pytest.raises(SessionNotFound):
            async with room.arriving(SID):  # c's attach, which fails
                await room.client_gone(a)
                raise SessionNotFound()
        assert sessions.closed == []  # b still arrives
    room.attach(SID, FakeClient("b"), live=False)
    assert sessions.closed == []
