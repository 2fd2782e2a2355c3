"""The cluster as the protocol core's Replicas port: a request its holder hands back, or one
no other replica holds a turn for, is the sender's own (NOT_ROUTED); a queued prompt is
sent only once a holder is found, and tells the sender so first; a permission answer routed
here reaches the relayed questions, never the dispatcher's apply; and once started, the
cluster forwards the channels' numbered updates. Two replicas in one process, over
in-memory signals, leases and routed requests."""

from datetime import datetime, timedelta
from typing import Any

from adapters.acp_v1.rendering import V1Rendering
from adapters.cluster.questions import ANSWER_METHOD, RelayedQuestions
from adapters.cluster.relay import ClusterRelay
from adapters.cluster.relaying import Relaying
from adapters.cluster.replicas import ClusterReplicas
from adapters.cluster.routing import RequestRouter, RoutingTerms
from adapters.local_signals import LocalSignals
from adapters.protocol.channels import SessionChannels
from adapters.protocol.journal import UpdateJournal
from adapters.protocol.replicas import NOT_ROUTED, QUEUED_METHOD, HandBack
from application.attachments.room import Attachments
from application.ports.cluster_attachments import ClusterAttachments, Swept
from domain.ids import SessionId
from tests.factories import SessionFactory
from tests.fakes.clients import FakeSessions
from tests.fakes.journal import InMemoryJournalStore
from tests.fakes.leases import InMemoryTurnLeases
from tests.fakes.routing import InMemoryRoutedRequests
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.time_and_ids import StoppedClock

LEASE = timedelta(seconds=30)


class Registry(ClusterAttachments):
    """Nobody follows anything elsewhere, and every replica is alive."""

    async def renew(self, replica_id: str, now: datetime, seconds: float) -> bool:
        return True

    async def attach(self, session_id: str, replica_id: str, clients: int, now: datetime) -> None:
        return None

    async def watchers(self, now: datetime) -> dict[str, set[str]]:
        return {}

    async def is_live(self, replica_id: str, now: datetime) -> bool:
        return True

    async def sweep(self, now: datetime) -> Swept:
        return Swept(replicas=(), interrupted=())

    async def leave(self, replica_id: str) -> None:
        return None


async def nobody(session_id: str) -> bool:
    return False


class Pair:
    """r1 runs the session's turn; r2 sends."""

    def __init__(self) -> None:
        repository = InMemorySessionRepository()
        session = SessionFactory()
        repository.stored[session.id] = session
        self.sid = session.id
        self.leases = InMemoryTurnLeases(repository)
        self.clock = StoppedClock()
        self.store = InMemoryRoutedRequests(self.leases)
        self.signals = LocalSignals()
        self.applied: list[tuple[str, dict[str, Any]]] = []
        self.outcome: Any = {"ok": 1}
        self.replicas = {name: self._replicas(name) for name in ("r1", "r2")}

    def _replicas(self, name: str) -> ClusterReplicas:
        room = Attachments(close=FakeSessions().close, busy=FakeSessions({self.sid}).busy)
        channels = SessionChannels(room, V1Rendering())
        relaying = Relaying(
            replica_id=name,
            room=room,
            channels=channels,
            journal=UpdateJournal(InMemoryJournalStore(), self.clock.now),
            store=InMemoryJournalStore(),
            registry=Registry(),
            signals=self.signals,
            leases=self.leases,
            now=self.clock.now,
        )
        router = RequestRouter(
            store=self.store,
            signals=self.signals,
            leases=self.leases,
            clock=self.clock,
            terms=RoutingTerms(replica_id=name, poll=0.02, grace=1.0),
        )
        questions = RelayedQuestions(
            room=room,
            store=self.store,
            signals=self.signals,
            router=router,
            clock=self.clock,
            replica_id=name,
        )
        self.channels = channels
        return ClusterReplicas(
            relay=ClusterRelay(relaying),
            router=router,
            questions=questions,
            channels=channels,
            held_elsewhere=nobody,
        )

    async def start(self) -> None:
        for replicas in self.replicas.values():
            await replicas.start(self._apply, lambda _session_id: None)

    async def _apply(self, method: str, params: dict[str, Any]) -> Any:
        self.applied.append((method, params))
        if self.outcome is HandBack:
            raise HandBack
        return self.outcome

    async def r1_runs_the_turn(self) -> None:
        now = self.clock.now()
        assert await self.leases.acquire(SessionId(self.sid), "r1", now, now + LEASE)

    async def close(self) -> None:
        for replicas in self.replicas.values():
            await replicas.aclose()


async def test_a_request_is_the_senders_own_without_a_holder_elsewhere_or_once_handed_back() -> (
    None
):
    pair = Pair()
    await pair.start()
    r2 = pair.replicas["r2"]
    try:
        assert await r2.to_holder(pair.sid, "session/set_mode", {}) is NOT_ROUTED
        await pair.r1_runs_the_turn()
        assert await r2.to_holder(pair.sid, "session/set_mode", {"m": 1}) == {"ok": 1}
        pair.outcome = HandBack
        assert await r2.to_holder(pair.sid, "_session/steering", {}) is NOT_ROUTED
        assert [m for m, _ in pair.applied] == ["session/set_mode", "_session/steering"]
    finally:
        await pair.close()


async def test_a_queued_prompt_goes_to_the_holder_only_and_says_so_before_it_is_sent() -> None:
    pair = Pair()
    await pair.start()
    r2 = pair.replicas["r2"]
    told: list[int] = []
    try:
        queued = {"prompt": {"sessionId": pair.sid}, "queuedBy": "zed"}
        assert await r2.queue_on_holder(pair.sid, queued, lambda: told.append(1)) is NOT_ROUTED
        assert told == []  # no holder: nothing routed, the prompt is still the sender's
        await pair.r1_runs_the_turn()
        outcome = await r2.queue_on_holder(pair.sid, queued, lambda: told.append(len(pair.applied)))
        assert outcome == {"ok": 1}
        assert told == [0]  # told before the holder applied it
        assert pair.applied == [(QUEUED_METHOD, queued)]
    finally:
        await pair.close()


async def test_an_answer_routed_here_reaches_the_questions_not_the_dispatcher() -> None:
    pair = Pair()
    await pair.start()
    try:
        await pair.r1_runs_the_turn()
        answer = {"questionId": "q-unknown", "answer": {"outcome": "cancelled"}}
        outcome = await pair.replicas["r2"].to_holder(pair.sid, ANSWER_METHOD, answer)
        assert outcome == {"accepted": False}  # no such question is asked there
        assert pair.applied == []
    finally:
        await pair.close()
