"""The room for the shared session with fake clients (no transport, no connection): the
ownership rules as the room applies them."""

import pytest

from application.attachments.ownership import NotAttached, Role
from application.attachments.room import Attachments
from tests.fakes.clients import FakeClient, FakeSessions
from tests.unit.application.attachments_room.support import SID, clients


def test_the_first_attached_controls_and_later_ones_observe(room: Attachments) -> None:
    a, b, c = clients("a", "b", "c")
    assert room.attach(SID, a) is Role.CONTROLLER
    assert room.attach(SID, b) is Role.OBSERVER
    assert room.attach(SID, a) is Role.CONTROLLER  # attaching again changes nothing
    assert room.peers_of(SID) == [a, b] and room.controller_of(SID) is a
    assert room.role(SID, b) is Role.OBSERVER
    assert room.role(SID, c) is Role.OBSERVER  # not attached: told it observes
    assert room.sessions_of(b) == [SID] and room.sessions_of(c) == []


def test_only_attached_clients_act_on_a_held_session_and_anyone_on_a_free_one(
    room: Attachments,
) -> None:
    a, b, c = clients("a", "b", "c")
    room.check_may_act("free", c)  # nobody holds it: no refusal
    assert room.may_cancel("free", c)
    room.attach(SID, a)
    room.attach(SID, b)
    room.check_may_act(SID, b)
    assert room.may_cancel(SID, b)  # an observer may cancel
    with pytest.raises(NotAttached):
        room.check_may_act(SID, c)
    assert not room.may_cancel(SID, c)
    with pytest.raises(NotAttached):
        room.close_by(SID, c)  # another client's session is not c's to close


def test_a_fork_is_refused_only_while_another_clients_prompt_runs(
    room: Attachments, sessions: FakeSessions
) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b)
    assert not room.running_elsewhere(SID, b)  # idle: its history is whole
    sessions.running.add(SID)
    assert room.running_elsewhere(SID, b)
    assert not room.running_elsewhere(SID, a)  # its controller may


async def test_a_client_attached_held_is_live_once_its_replay_is_sent(room: Attachments) -> None:
    a, b = clients("a", "b")
    room.attach(SID, a)
    room.attach(SID, b, live=False)
    assert room.live_peers(SID) == [a] and room.peers_of(SID) == [a, b]
    await room.went_live(SID, b)
    assert room.live_peers(SID) == [a, b]


def test_detaching_hands_control_to_the_longest_attached_and_tells_the_listeners(
    room: Attachments,
) -> None:
    a, b, c = clients("a", "b", "c")
    left: list[FakeClient] = []
    room.on_left(lambda _, client: left.append(client))  # type: ignore[arg-type]
    for client in (a, b, c):
        room.attach(SID, client)
    assert room.detach(SID, a) is False and room.controller_of(SID) is b
    assert room.detach(SID, c) is False and room.controller_of(SID) is b
    assert room.detach(SID, FakeClient("x")) is False  # never attached: not "the last"
    assert room.detach(SID, b) is True and room.controller_of(SID) is None
    assert left == [a, c, b]
