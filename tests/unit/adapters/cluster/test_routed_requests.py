"""Requests routed to the replica running a session's turn, and its permission requests
shown on every replica: two replicas in one process, sharing in-memory signals, leases
and routed requests (the SQL store: tests/integration; real replicas: tests/cluster)."""

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from adapters.cluster.questions import ANSWER_METHOD, RelayedQuestions
from adapters.cluster.routing import RequestRouter, RoutingTerms
from adapters.local_signals import LocalSignals
from adapters.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from adapters.protocol.replicas import NOT_ROUTED, HandBack
from application.attachments.room import Attachments
from application.ports.cluster_signals import MAX_PAYLOAD, ClusterSignals, Unsubscribe
from application.ports.permissions import PermissionRequest
from application.ports.questions import PermissionAnswer, PermissionQuestion
from application.ports.routed_requests import AskedQuestion
from domain.ids import SessionId, ToolCallId
from domain.permission import PermissionOption
from domain.tool_call import DiffOutput, ToolKind
from tests.factories import SessionFactory
from tests.fakes.clients import FakeClient, FakeSessions
from tests.fakes.leases import InMemoryTurnLeases
from tests.fakes.routing import InMemoryRoutedRequests
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.time_and_ids import StoppedClock

POLL = 0.02  # the tests' senders read their rows this often
BOUND = 5.0
LEASE = timedelta(seconds=30)
REQUEST = PermissionRequest(
    tool_call_id=ToolCallId("call-1"),
    tool_name="write_file",
    title="Write notes.md",
    kind=ToolKind.EDIT,
    arguments={"path": "notes.md", "content": "hello"},
    locations=("notes.md",),
    preview=(DiffOutput(path="notes.md", old_text=None, new_text="hello"),),
)
ALLOW = PermissionAnswer(PermissionOption.ALLOW_ONCE)
REJECT = PermissionAnswer(PermissionOption.REJECT_ONCE)
ALWAYS = PermissionAnswer(PermissionOption.ALLOW_ALWAYS)
NEVER = PermissionAnswer(PermissionOption.REJECT_ALWAYS)


class Deaf(ClusterSignals):
    """Signals that never arrive (a listener down): only the database tells."""

    async def publish(self, channel: str, payload: str) -> None:
        return None

    async def subscribe(
        self, channel: str, on_message: Callable[[str], None], on_resync: Callable[[], None]
    ) -> Unsubscribe:
        async def unsubscribe() -> None:
            return None

        return unsubscribe

    async def close(self) -> None:
        return None


class Measured(LocalSignals):
    """In-process signals that keep the size of the largest payload published."""

    largest = 0

    async def publish(self, channel: str, payload: str) -> None:
        self.largest = max(self.largest, len(payload.encode()))
        await super().publish(channel, payload)


class Cluster:
    """Replicas r1 (running the session's turn) and r2, each with its router and room."""

    def __init__(self, signals: ClusterSignals | None = None) -> None:
        repository = InMemorySessionRepository()
        session = SessionFactory()
        repository.stored[session.id] = session
        self.sid = session.id
        self.leases = InMemoryTurnLeases(repository)
        self.clock = StoppedClock()
        self.store = InMemoryRoutedRequests(self.leases)
        self.signals = signals or LocalSignals()
        self.applied: dict[str, list[tuple[str, dict[str, Any]]]] = {"r1": [], "r2": []}
        self.routers = {name: self._router(name) for name in ("r1", "r2")}
        self.rooms = {
            name: Attachments(close=FakeSessions().close, busy=FakeSessions({self.sid}).busy)
            for name in ("r1", "r2")
        }
        self.relays = {
            name: RelayedQuestions(
                room=self.rooms[name],
                store=self.store,
                signals=self.signals,
                router=self.routers[name],
                clock=self.clock,
                replica_id=name,
                poll=POLL,
            )
            for name in ("r1", "r2")
        }
        self.outcome: Callable[[str, dict[str, Any]], Any] = lambda method, params: {"ok": 1}

    def _router(self, name: str) -> RequestRouter:
        terms = RoutingTerms(replica_id=name, poll=POLL, grace=1.0)
        return RequestRouter(
            store=self.store,
            signals=self.signals,
            leases=self.leases,
            clock=self.clock,
            terms=terms,
        )

    async def start(self, *names: str) -> None:
        for name in names or ("r1", "r2"):
            await self.routers[name].start(self._applier(name), lambda _sid: None)
            await self.relays[name].start()

    def _applier(self, name: str) -> Callable[[str, dict[str, Any]], Any]:
        async def apply(method: str, params: dict[str, Any]) -> Any:
            self.applied[name].append((method, params))
            if method == ANSWER_METHOD:
                return self.relays[name].answered_here(params)
            return self.outcome(method, params)

        return apply

    async def r1_runs_the_turn(self) -> None:
        now = self.clock.now()
        assert await self.leases.acquire(SessionId(self.sid), "r1", now, now + LEASE)


async def eventually(condition: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while not condition():
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0.005)


async def test_nothing_is_routed_when_no_turn_runs_elsewhere() -> None:
    cluster = Cluster()
    await cluster.start()
    r1 = cluster.routers["r1"]
    assert await r1.to_holder(cluster.sid, "session/set_mode", {}) is NOT_ROUTED  # no turn
    await cluster.r1_runs_the_turn()
    assert await r1.to_holder(cluster.sid, "session/set_mode", {}) is NOT_ROUTED  # its own
    assert cluster.store.rows == {}


async def test_a_request_is_applied_once_by_the_holder_and_answered_with_its_result() -> None:
    cluster = Cluster()
    await cluster.start()
    await cluster.r1_runs_the_turn()
    params = {"sessionId": cluster.sid, "modeId": "plan"}

    answer = await cluster.routers["r2"].to_holder(cluster.sid, "session/set_mode", params)

    assert answer == {"ok": 1}
    assert cluster.applied == {"r1": [("session/set_mode", params)], "r2": []}
    await eventually(lambda: cluster.store.rows == {})  # the sender deletes the row


async def test_an_outcome_too_big_for_a_signal_is_read_from_the_database() -> None:
    signals = Measured()
    cluster = Cluster(signals)
    big = {"text": "x" * (MAX_PAYLOAD + 1)}
    cluster.outcome = lambda method, params: big
    await cluster.start()
    await cluster.r1_runs_the_turn()

    assert await cluster.routers["r2"].to_holder(cluster.sid, "session/set_mode", {}) == big
    assert signals.largest <= MAX_PAYLOAD  # the answer's signal named the row only


async def test_the_holders_error_reaches_the_sender_as_it_gave_it() -> None:
    cluster = Cluster()

    def refuse(method: str, params: dict[str, Any]) -> Any:
        raise RpcError(INVALID_PARAMS, "Unknown mode", {"available": ["default"]})

    cluster.outcome = refuse
    await cluster.start()
    await cluster.r1_runs_the_turn()

    with pytest.raises(RpcError) as refused:
        await cluster.routers["r2"].to_holder(cluster.sid, "session/set_mode", {})

    assert (refused.value.code, refused.value.message) == (INVALID_PARAMS, "Unknown mode")
    assert refused.value.data == {"available": ["default"]}


async def test_a_request_the_holder_has_no_turn_for_is_handed_back() -> None:
    cluster = Cluster()

    def hand_back(method: str, params: dict[str, Any]) -> Any:
        raise HandBack

    cluster.outcome = hand_back
    await cluster.start()
    await cluster.r1_runs_the_turn()

    with pytest.raises(HandBack):
        await cluster.routers["r2"].to_holder(cluster.sid, "_session/steering", {})


async def test_without_signals_the_database_still_carries_request_and_answer() -> None:
    cluster = Cluster(signals=Deaf())
    await cluster.r1_runs_the_turn()
    sending = asyncio.ensure_future(
        cluster.routers["r2"].to_holder(cluster.sid, "session/set_mode", {"n": 1})
    )
    await eventually(lambda: len(cluster.store.rows) == 1)

    await cluster.start("r1")  # listening again: it reads what waits for it

    assert await asyncio.wait_for(sending, BOUND) == {"ok": 1}  # read by the sender's poll
    assert cluster.applied["r1"] == [("session/set_mode", {"n": 1})]


async def test_a_holder_that_died_before_claiming_answers_an_error_and_never_applies_it() -> None:
    cluster = Cluster(signals=Deaf())  # r1 is dead: nothing listens for it
    await cluster.r1_runs_the_turn()
    sending = asyncio.ensure_future(
        cluster.routers["r2"].to_holder(cluster.sid, "session/set_mode", {})
    )
    await eventually(lambda: len(cluster.store.rows) == 1)
    assert not sending.done()  # its lease is live: it may yet answer

    cluster.clock.current += LEASE  # the lease lapses

    with pytest.raises(RpcError) as stopped:
        await asyncio.wait_for(sending, BOUND)
    assert stopped.value.code == INTERNAL_ERROR
    assert stopped.value.data == {
        "sessionId": cluster.sid,
        "method": "session/set_mode",
        "replica": "r1",
    }
    await cluster.start("r1")  # back (restarted with its id): the request is not applied
    await asyncio.sleep(POLL * 5)
    assert cluster.applied["r1"] == []


def ask(cluster: Cluster) -> PermissionQuestion:
    return PermissionQuestion(cluster.sid, REQUEST)


async def a_client_on_each_replica() -> tuple[Cluster, FakeClient, FakeClient]:
    """r1 runs the session's turn; client a is attached on r1, client b on r2."""
    cluster = Cluster()
    await cluster.start()
    await cluster.r1_runs_the_turn()
    a, b = FakeClient("a"), FakeClient("b")
    cluster.rooms["r1"].attach(cluster.sid, a)
    cluster.rooms["r2"].attach(cluster.sid, b)
    return cluster, a, b


async def test_a_permission_request_is_answered_from_the_other_replica_and_withdrawn_here() -> None:
    cluster, a, b = await a_client_on_each_replica()
    question = PermissionQuestion(cluster.sid, REQUEST)

    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(question))
    await eventually(lambda: len(b.calls) == 1)
    assert b.last_call().question == question  # shown there as asked here
    assert cluster.rooms["r2"].awaiting_permission(cluster.sid)  # its turn state, there too
    b.last_call().reply(REJECT)

    assert await asyncio.wait_for(asking, BOUND) == REJECT
    assert a.last_call().withdrawn and not b.last_call().withdrawn
    assert cluster.store.questions == {}  # settled
    await eventually(lambda: not cluster.rooms["r2"].awaiting_permission(cluster.sid))


async def test_an_answer_here_withdraws_the_other_replicas_copy() -> None:
    cluster, a, b = await a_client_on_each_replica()

    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(ask(cluster)))
    await eventually(lambda: len(b.calls) == 1)
    a.last_call().reply(ALLOW)

    assert await asyncio.wait_for(asking, BOUND) == ALLOW
    await eventually(lambda: b.last_call().withdrawn)
    b.last_call().reply(ALWAYS)  # its dialog closed: ignored
    assert cluster.applied["r1"] == []  # nothing was routed back


async def test_a_client_going_live_elsewhere_mid_request_gets_its_copy() -> None:
    cluster = Cluster()
    await cluster.start()
    await cluster.r1_runs_the_turn()
    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(ask(cluster)))
    await eventually(lambda: len(cluster.store.questions) == 1)
    late = FakeClient("late")
    cluster.rooms["r2"].attach(cluster.sid, late, live=False)  # its load's replay...
    await cluster.rooms["r2"].went_live(cluster.sid, late)  # ...sent

    await eventually(lambda: len(late.calls) == 1)
    late.last_call().reply(ALWAYS)
    assert await asyncio.wait_for(asking, BOUND) == ALWAYS


async def test_a_copy_ends_when_the_replica_that_asked_dies() -> None:
    cluster = Cluster()
    await cluster.start()
    await cluster.r1_runs_the_turn()
    b = FakeClient("b")
    cluster.rooms["r2"].attach(cluster.sid, b)
    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(ask(cluster)))
    await eventually(lambda: len(b.calls) == 1)

    cluster.clock.current += LEASE  # r1 died: its lease lapses, nobody settles the question

    await eventually(lambda: b.last_call().withdrawn)
    asking.cancel()


class Resyncable(LocalSignals):
    """In-process signals that can lose their messages, then resync, as a listener does
    after a lost connection."""

    def __init__(self) -> None:
        super().__init__()
        self.deaf = False
        self.resyncs: list[Callable[[], None]] = []

    async def publish(self, channel: str, payload: str) -> None:
        if not self.deaf:
            await super().publish(channel, payload)

    async def subscribe(
        self, channel: str, on_message: Callable[[str], None], on_resync: Callable[[], None]
    ) -> Unsubscribe:
        self.resyncs.append(on_resync)
        return await super().subscribe(channel, on_message, on_resync)

    def resync(self) -> None:
        self.deaf = False
        for on_resync in self.resyncs:
            on_resync()


async def test_a_question_posted_while_signals_were_lost_is_shown_after_the_resync() -> None:
    signals = Resyncable()
    cluster = Cluster(signals)
    await cluster.start()
    await cluster.r1_runs_the_turn()
    b = FakeClient("b")
    cluster.rooms["r2"].attach(cluster.sid, b)
    signals.deaf = True  # the listener's connection is down
    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(ask(cluster)))
    await eventually(lambda: len(cluster.store.questions) == 1)
    await asyncio.sleep(POLL * 5)
    assert b.calls == []  # its announcement was lost

    signals.resync()  # listening again: every replica reads what it may have missed

    await eventually(lambda: len(b.calls) == 1)
    b.last_call().reply(NEVER)
    assert await asyncio.wait_for(asking, BOUND) == NEVER


async def test_a_question_this_replica_cannot_read_is_not_shown_and_the_next_one_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = Cluster()
    await cluster.start()
    await cluster.r1_runs_the_turn()
    # An older replica's row: the question as its client saw it, not the typed one.
    old = AskedQuestion(
        id="q-old",
        session_id=cluster.sid,
        holder="r1",
        subject="call-0",
        kind="session/request_permission",
        body={"sessionId": cluster.sid, "toolCall": {"toolCallId": "call-0"}},
    )
    await cluster.store.post_question(old, cluster.clock.now())
    b = FakeClient("b")
    cluster.rooms["r2"].attach(cluster.sid, b, live=False)
    await cluster.rooms["r2"].went_live(cluster.sid, b)  # it looks for pending questions
    await eventually(lambda: "cannot be shown here" in caplog.text)  # said, not failed
    assert b.calls == []
    assert "Traceback" not in caplog.text

    asking = asyncio.ensure_future(cluster.rooms["r1"].ask_permission(ask(cluster)))
    await eventually(lambda: len(b.calls) == 1)
    b.last_call().reply(ALLOW)
    assert await asyncio.wait_for(asking, BOUND) == ALLOW
