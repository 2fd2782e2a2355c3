"""The room for the shared session: prompting, adoption, hand-over and give-back of control."""

import pytest

from application.attachments.room import Attachments
from application.errors import (
    ApplicationError,
    AuthRequired,
    ModelError,
    SessionBusy,
    SessionNotFound,
)
from tests.fakes.clients import FakeSessions, ManualTimers
from tests.unit.application.attachments_room.support import SID, clients


async def test_an_accepted_prompt_makes_its_attached_sender_the_controller(
    room: Attachments,
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    async with room.prompting(SID, b):
        assert room.controller_of(SID) is b  # its files and terminals serve the turn
    assert room.controller_of(SID) is b


@pytest.mark.parametrize("refusal", [SessionBusy, AuthRequired, SessionNotFound])
async def test_a_refused_prompt_gives_control_back(
    room: Attachments, refusal: type[ApplicationError]
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    with pytest.raises(refusal):
        async with room.prompting(SID, b):
            raise refusal()
    assert room.controller_of(SID) is a


async def test_a_prompt_that_fails_once_accepted_keeps_its_sender_in_control(
    room: Attachments,
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    with pytest.raises(ModelError):
        async with room.prompting(SID, b):
            raise ModelError("the provider is down")
    assert room.controller_of(SID) is b


async def test_a_prompt_while_a_turn_runs_takes_no_control(
    room: Attachments, sessions: FakeSessions
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    sessions.running.add(SID)
    with pytest.raises(SessionBusy):
        async with room.prompting(SID, b):
            assert room.controller_of(SID) is a
            raise SessionBusy()
    assert room.controller_of(SID) is a


async def test_a_prompt_on_a_session_nobody_follows_adopts_it_and_stops_the_old_clock(
    room: Attachments, sessions: FakeSessions, timers: ManualTimers
) -> None:
    (a, c) = clients("a", "c")
    room.attach(SID, a)
    sessions.running.add(SID)
    await room.client_gone(a)  # mid-turn: the detached clock starts
    assert timers.live() == [42.0]
    sessions.running.discard(SID)  # the turn ends; c, attached nowhere, prompts
    async with room.prompting(SID, c):
        assert room.peers_of(SID) == [c] and room.controller_of(SID) is c
        assert timers.live() == []  # that clock was for a's turn: it would cancel c's
    assert room.peers_of(SID) == [c]


async def test_a_refused_adoption_leaves_nobody_attached(
    room: Attachments, sessions: FakeSessions
) -> None:
    (c,) = clients("c")
    with pytest.raises(SessionNotFound):
        async with room.prompting(SID, c):
            raise SessionNotFound()
    assert room.peers_of(SID) == []
    assert sessions.closed == [SID]  # left alone and idle, as when any last client leaves


async def test_an_adopting_client_already_gone_leaves_at_once(
    room: Attachments, sessions: FakeSessions
) -> None:
    (c,) = clients("c")
    await room.client_gone(c)  # its connection closed while its prompt was read
    async with room.prompting(SID, c):
        assert room.peers_of(SID) == []
    assert sessions.closed == [SID]
