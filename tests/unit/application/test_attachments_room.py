"""The room for the shared session with fake clients (no transport, no connection): the
ownership rules as the room applies them, and each event of the attach lifecycle."""

import asyncio

import pytest

from application.attachments.ownership import NotAttached, Role
from application.attachments.room import Attachments
from application.errors import (
    ApplicationError,
    AuthRequired,
    ModelError,
    SessionBusy,
    SessionNotFound,
)
from tests.fakes.clients import FakeClient, FakeSessions, ManualTimers

SID = "s1"


@pytest.fixture
def sessions() -> FakeSessions:
    return FakeSessions()


@pytest.fixture
def timers() -> ManualTimers:
    return ManualTimers()


@pytest.fixture
def room(sessions: FakeSessions, timers: ManualTimers) -> Attachments:
    return Attachments(
        close=sessions.close, busy=sessions.busy, detached_timeout=42.0, schedule=timers
    )


async def settle() -> None:
    """Let every task that can run now run (a deadline's close, say)."""
    for _ in range(10):
        await asyncio.sleep(0)


def clients(*names: str) -> list[FakeClient]:
    return [FakeClient(name) for name in names]


# -- the ownership rules, through the room ----------------------------------------------


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


# -- prompting: adoption, hand-over, give-back ------------------------------------------


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


# -- the last client leaving, and the detached clock -------------------------------------


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


# -- attaches under way ------------------------------------------------------------------


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


# -- closing ------------------------------------------------------------------------------


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


# -- clients already gone, handlers waiting, deletion -------------------------------------


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


# -- clients attached on other replicas (issue 32) ---------------------------------------


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
