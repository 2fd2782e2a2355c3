"""Two replicas in one process, each with its own room, channels, journal and cluster (its
relay, router and relayed questions, as bootstrap/containers/clients.py wires them), over one
real database (SQLite with in-process signals, or a PostgreSQL server of the test's own
with LISTEN/NOTIFY): a client attached on the second receives the first's updates exactly
once, in order, with the same numbers; through lost signals, updates too big for one, and a
PostgreSQL restart in the middle of a stream."""

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters.acp_v1.rendering import V1Rendering
from adapters.clock import SystemClock
from adapters.cluster.questions import RelayedQuestions
from adapters.cluster.relay import ClusterRelay
from adapters.cluster.relaying import Relaying
from adapters.cluster.replicas import ClusterReplicas
from adapters.cluster.routes import RelayTerms, updates_channel
from adapters.cluster.routing import RequestRouter, RoutingTerms
from adapters.local_signals import LocalSignals
from adapters.persistence.cluster_attachments import SqlAlchemyClusterAttachments
from adapters.persistence.engine import make_engine
from adapters.persistence.journal_store import SqlAlchemyUpdateJournalStore
from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.routed_requests import SqlAlchemyRoutedRequests
from adapters.protocol.channels import SessionChannels
from adapters.protocol.journal import JournalTerms, UpdateJournal, seq_of
from application.attachments.room import Attachments
from application.ports.cluster_signals import ClusterSignals, Unsubscribe
from domain.events import TextDelta
from domain.ids import MessageId, SessionId
from tests.fakes.clients import FakeClient
from tests.support.throwaway_postgres import throwaway_postgres

SESSION = SessionId("sess_relayed")


def now() -> datetime:
    return datetime.now(UTC)


async def until(condition: Callable[[], bool], what: str, bound: float = 60.0) -> None:
    for _ in range(int(bound / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    assert condition(), what


class Lossy(ClusterSignals):
    """Signals that drop every `every`-th update signal (as a listener that was away would
    miss them), and count what is published on update channels."""

    def __init__(self, inner: ClusterSignals, every: int = 0) -> None:
        self.inner = inner
        self.every = every
        self.update_signals = 0

    async def publish(self, channel: str, payload: str) -> None:
        if channel.startswith("iac_code_up_"):
            self.update_signals += 1
            if self.every and self.update_signals % self.every == 0:
                return
        await self.inner.publish(channel, payload)

    async def subscribe(
        self, channel: str, on_message: Callable[[str], None], on_resync: Callable[[], None]
    ) -> Unsubscribe:
        return await self.inner.subscribe(channel, on_message, on_resync)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Replica:
    id: str
    channels: SessionChannels
    room: Attachments
    journal: UpdateJournal
    relaying: Relaying
    relay: ClusterRelay
    replicas: ClusterReplicas
    signals: Lossy
    engine: Any
    clients: list[FakeClient] = field(default_factory=list)

    async def attach(self, session_id: str) -> FakeClient:
        """A client attaching as session/load does: followed first, then live."""
        client = FakeClient(f"{self.id}-client")
        elsewhere = await self.replicas.follow(session_id)
        attaching = self.channels.begin_attach(session_id, client, elsewhere=elsewhere)
        await attaching.go_live()
        self.clients.append(client)
        return client

    async def stream(self, session_id: str, texts: list[str]) -> None:
        for text in texts:
            await self.channels.emit(
                SessionId(session_id), TextDelta(message_id=MessageId("m1"), text=text)
            )

    async def close(self) -> None:
        await self.replicas.aclose()
        await self.journal.aclose()
        await self.signals.close()
        await self.engine.dispose()


async def make_replica(
    url: str, replica_id: str, signals: ClusterSignals, flush_seconds: float = 0.05
) -> Replica:
    engine = make_engine(url)
    store = SqlAlchemyUpdateJournalStore(engine)
    journal = UpdateJournal(store, now, JournalTerms(flush_seconds=flush_seconds))

    async def close(_: str) -> None:
        return None

    room = Attachments(close=close, busy=lambda _: False)
    channels = SessionChannels(room, V1Rendering(), update_log=journal)
    lossy = signals if isinstance(signals, Lossy) else Lossy(signals)
    leases = SqlAlchemyTurnLeases(engine)
    relaying = Relaying(
        replica_id=replica_id,
        room=room,
        channels=channels,
        journal=journal,
        store=store,
        registry=SqlAlchemyClusterAttachments(engine, database_clock=False),
        signals=lossy,
        leases=leases,
        now=now,
        terms=RelayTerms(lease_seconds=3.0, fill_patience=30.0),
    )
    relay = ClusterRelay(relaying)
    requests = SqlAlchemyRoutedRequests(engine)
    clock = SystemClock()
    router = RequestRouter(
        store=requests,
        signals=lossy,
        leases=leases,
        clock=clock,
        terms=RoutingTerms(replica_id=replica_id),
    )
    questions = RelayedQuestions(
        room=room, store=requests, signals=lossy, router=router, clock=clock, replica_id=replica_id
    )
    replicas = ClusterReplicas(
        relay=relay, router=router, questions=questions, channels=channels, held_elsewhere=nobody
    )
    await replicas.start(apply=nothing_applied, poke=lambda _session_id: None)
    return Replica(replica_id, channels, room, journal, relaying, relay, replicas, lossy, engine)


async def nobody(session_id: str) -> bool:
    return False


async def nothing_applied(method: str, params: dict[str, Any]) -> Any:
    raise AssertionError(f"nothing is routed in these tests: {method}")


def numbered(client: FakeClient) -> list[dict[str, Any]]:
    return [params for _, params in client.notified if seq_of(params) is not None]


def without_turn(params: dict[str, Any]) -> dict[str, Any]:
    ours = {k: v for k, v in params["_meta"]["iac_code"].items() if k != "turn"}
    return {**params, "_meta": {"iac_code": ours}}


async def followed(one: Replica, two: Replica) -> None:
    """`one` knows that `two` follows the session (its attach signal arrived)."""
    await until(lambda: one.relay.followed_elsewhere(SESSION), "the follow known")


@pytest.fixture
async def sqlite_pair(tmp_path: Path) -> AsyncIterator[tuple[Replica, Replica]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    await asyncio.to_thread(upgrade_to_head, url)
    signals = LocalSignals()  # one process: what both replicas hear
    one = await make_replica(url, "r1", Lossy(signals))
    two = await make_replica(url, "r2", Lossy(signals))
    yield one, two
    await one.close()
    await two.close()


async def test_a_follower_gets_every_update_once_in_order_with_the_same_numbers(
    sqlite_pair: tuple[Replica, Replica],
) -> None:
    one, two = sqlite_pair
    here = await one.attach(SESSION)
    await one.stream(SESSION, [f"early {n} " for n in range(20)])
    await one.journal.flush()  # the journal's head, where a follower starts, is 20
    there = await two.attach(SESSION)
    await followed(one, two)
    await one.stream(SESSION, [f"late {n} " for n in range(300)])

    sent = numbered(here)
    await until(lambda: len(numbered(there)) >= 300, "the follower's updates")
    got = numbered(there)
    assert [seq_of(p) for p in got] == list(range(21, 321))  # from where it joined, no gap
    assert [without_turn(p) for p in got] == [without_turn(p) for p in sent[20:]]
    assert one.signals.update_signals < 300  # many updates to a notification


async def test_a_replica_nobody_else_follows_signals_no_update(
    sqlite_pair: tuple[Replica, Replica],
) -> None:
    one, _ = sqlite_pair
    here = await one.attach(SESSION)
    await one.stream(SESSION, ["alone "] * 50)
    assert len(numbered(here)) == 50
    await asyncio.sleep(0.2)  # the sender task would have run by now
    assert one.signals.update_signals == 0


async def test_lost_signals_and_an_update_too_big_for_one_are_read_from_the_journal(
    sqlite_pair: tuple[Replica, Replica],
) -> None:
    one, two = sqlite_pair
    one.signals.every = 3  # every third notification lost
    here = await one.attach(SESSION)
    there = await two.attach(SESSION)
    await followed(one, two)
    for n in range(40):
        await one.stream(SESSION, [f"chunk {n} "])
        if n % 10 == 0:
            await one.stream(SESSION, ["x" * 20_000])  # over a notification's limit
        await asyncio.sleep(0.005)  # several notifications, some of them lost

    await until(lambda: len(numbered(there)) == len(numbered(here)), "every update followed")
    assert [without_turn(p) for p in numbered(there)] == [without_turn(p) for p in numbered(here)]


async def test_numbers_a_dead_replica_never_wrote_are_followed_when_given_again(
    tmp_path: Path,
) -> None:
    """A replica dies with updates its followers were shown but its journal never got; the
    next replica to number the session numbers after what is written, so gives those numbers
    again (as a cluster test saw, with the notice telling the turn ended). The follower takes
    them for what they are, new updates, not for ones it has."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    await asyncio.to_thread(upgrade_to_head, url)
    signals = LocalSignals()
    dying = await make_replica(url, "r1", Lossy(signals), flush_seconds=3600)  # writes nothing
    follower = await make_replica(url, "r2", Lossy(signals))
    successor = await make_replica(url, "r3", Lossy(signals))
    try:
        there = await follower.attach(SESSION)
        await followed(dying, follower)
        await dying.stream(SESSION, [f"never written {n} " for n in range(5)])
        await until(lambda: len(numbered(there)) == 5, "the dying replica's updates followed")
        await dying.replicas.aclose()  # dead: its journal keeps them unwritten

        await followed(successor, follower)
        await successor.stream(SESSION, ["the turn ended ", "next turn "])
        await until(lambda: len(numbered(there)) == 7, "the successor's updates followed")
        got = numbered(there)
        assert [seq_of(p) for p in got] == [1, 2, 3, 4, 5, 1, 2]
        assert [p["update"]["content"]["text"] for p in got[5:]] == [
            "the turn ended ",
            "next turn ",
        ]
        # Its connection is told before the first of them, so that a transport skipping
        # numbers it sent (HTTP's event ids) sends them too.
        assert there.numbered_again_from == [(SESSION, 1)]
    finally:
        for replica in (follower, successor):
            await replica.close()
        await dying.engine.dispose()


async def test_a_follower_swept_while_slow_reads_what_it_was_not_sent_meanwhile(
    sqlite_pair: tuple[Replica, Replica],
) -> None:
    """Taken for dead (its heartbeat late), a follower is dropped from the others' routes;
    what they number meanwhile is not sent to it. Its next beat finds it was swept: it
    says its follows again and reads what it missed from the journal."""
    one, two = sqlite_pair
    here = await one.attach(SESSION)
    there = await two.attach(SESSION)
    await followed(one, two)
    # Swept (its row and attachments gone), and dropped from r1's routes as r1's sweep does.
    await SqlAlchemyClusterAttachments(two.engine, database_clock=False).leave("r2")
    one.relaying.routes[SESSION].targets.discard("r2")
    await one.stream(SESSION, [f"while r2 was away {n} " for n in range(5)])
    await one.journal.flush()

    await until(lambda: len(numbered(there)) == 5, "what r2 was not sent, read at its beat")
    assert [without_turn(p) for p in numbered(there)] == [without_turn(p) for p in numbered(here)]


async def test_the_follower_numbers_its_own_turn_after_the_followed_one(
    sqlite_pair: tuple[Replica, Replica],
) -> None:
    one, two = sqlite_pair
    here = await one.attach(SESSION)
    there = await two.attach(SESSION)
    await followed(one, two)
    await one.stream(SESSION, ["first turn "] * 5)
    await until(lambda: len(numbered(there)) == 5, "the first turn followed")
    await until(lambda: two.relay.followed_elsewhere(SESSION), "the follow back known")
    await two.stream(SESSION, ["second turn "] * 5)  # the next turn runs on the other
    await until(lambda: len(numbered(here)) == 10, "the second turn followed back")
    assert [seq_of(p) for p in numbered(here)] == list(range(1, 11))
    assert [seq_of(p) for p in numbered(there)] == list(range(1, 11))


async def test_a_postgresql_restart_mid_stream_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    from adapters.persistence.signals import PostgresSignals

    with throwaway_postgres(tmp_path) as server:
        await asyncio.to_thread(upgrade_to_head, server.url)
        one = await make_replica(server.url, "r1", PostgresSignals(server.url, ping_seconds=0.2))
        two = await make_replica(server.url, "r2", PostgresSignals(server.url, ping_seconds=0.2))
        try:
            here = await one.attach(SESSION)
            there = await two.attach(SESSION)
            await followed(one, two)
            await one.stream(SESSION, [f"before {n} " for n in range(50)])
            await until(lambda: len(numbered(there)) == 50, "the stream followed")

            restarting = asyncio.create_task(asyncio.to_thread(server.restart))
            n = 0
            while not restarting.done():  # the turn streams on through the restart
                await one.stream(SESSION, [f"during {n} "])
                n += 1
                await asyncio.sleep(0.01)
            await restarting
            await one.stream(SESSION, [f"after {n} " for n in range(50)])

            sent = numbered(here)
            await until(lambda: len(numbered(there)) >= len(sent), "the follower caught up")
            await asyncio.sleep(0.5)  # nothing more arrives: no duplicate
            assert [seq_of(p) for p in numbered(there)] == list(range(1, len(sent) + 1))
            assert [without_turn(p) for p in numbered(there)] == [without_turn(p) for p in sent]
            assert any("during" in str(p) for p in sent)
        finally:
            await one.close()
            await two.close()


def test_each_replica_hears_on_a_channel_name_postgresql_takes() -> None:
    for replica_id in ("r1", "Replica-A_2", "x" * 40):
        channel = updates_channel(replica_id)
        assert len(channel) <= 63 and channel == channel.lower()
        assert channel.replace("_", "").isalnum()
    assert updates_channel("r1") != updates_channel("R1")
