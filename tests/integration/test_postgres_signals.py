"""Cluster signals over a real PostgreSQL: two adapters stand for two replicas."""

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest

from adapters.local_signals import LocalSignals
from adapters.persistence.signals import PostgresSignals, asyncpg_dsn
from application.ports.cluster_signals import MAX_PAYLOAD, ClusterSignals
from bootstrap.containers.storage import cluster_signals
from tests.support.postgres import scratch_database


@pytest.fixture
def database() -> Iterator[str]:
    # NOTIFY reaches listeners of the same database only: a database per test keeps
    # parallel tests apart.
    with scratch_database("signals") as url:
        yield url


@pytest.fixture
async def replicas(database: str) -> AsyncIterator[tuple[PostgresSignals, PostgresSignals]]:
    # The default ping (5 s): a 0.2 s one timed out on a loaded machine, and the listener
    # it replaced missed what was published meanwhile (each subscriber is resynced then,
    # but these tests count deliveries). A closed connection is noticed without a ping.
    one, two = PostgresSignals(database), PostgresSignals(database)
    yield one, two
    await one.close()
    await two.close()


async def until(condition: Callable[[], bool], bound: float = 30.0) -> bool:
    for _ in range(int(bound / 0.02)):
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()


def nothing() -> None:
    pass


async def test_a_signal_reaches_every_replica_listening_on_its_channel(
    replicas: tuple[PostgresSignals, PostgresSignals],
) -> None:
    one, two = replicas
    heard_one: list[str] = []
    heard_two: list[str] = []
    await one.subscribe("iac_code_test", heard_one.append, nothing)
    await two.subscribe("iac_code_test", heard_two.append, nothing)
    await two.subscribe("iac_code_other", lambda payload: heard_two.append("other"), nothing)
    for n in range(5):
        await one.publish("iac_code_test", f"m{n}")
    expected = [f"m{n}" for n in range(5)]
    assert await until(lambda: heard_one == expected and heard_two == expected)


async def test_after_unsubscribing_nothing_more_arrives(
    replicas: tuple[PostgresSignals, PostgresSignals],
) -> None:
    one, two = replicas
    heard: list[str] = []
    stop = await two.subscribe("iac_code_test", heard.append, nothing)
    await one.publish("iac_code_test", "first")
    assert await until(lambda: heard == ["first"])
    await stop()
    await one.publish("iac_code_test", "second")
    marker: list[str] = []
    await two.subscribe("iac_code_marker", marker.append, nothing)
    await one.publish("iac_code_marker", "done")  # published after: arrives after
    assert await until(lambda: marker == ["done"])
    assert heard == ["first"]


async def test_a_payload_over_the_limit_is_refused(
    replicas: tuple[PostgresSignals, PostgresSignals],
) -> None:
    one, _ = replicas
    with pytest.raises(ValueError, match="at most"):
        await one.publish("iac_code_test", "x" * (MAX_PAYLOAD + 1))
    await one.publish("iac_code_test", "é" * (MAX_PAYLOAD // 2))  # bytes, not characters


async def test_a_lost_listener_listens_again_and_resyncs_its_subscribers(
    database: str, replicas: tuple[PostgresSignals, PostgresSignals]
) -> None:
    one, two = replicas
    heard: list[str] = []
    resyncs: list[str] = []
    await one.subscribe("iac_code_test", heard.append, lambda: resyncs.append("resync"))
    await two.publish("iac_code_test", "before")
    assert await until(lambda: heard == ["before"])
    admin = await asyncpg.connect(asyncpg_dsn(database))
    try:  # the server ends every other backend, as a restart would
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await admin.close()
    assert await until(lambda: resyncs == ["resync"])
    await two.publish("iac_code_test", "after")  # the publisher's connection was ended too
    assert await until(lambda: heard == ["before", "after"])


async def test_a_failing_subscriber_does_not_silence_the_others(
    replicas: tuple[PostgresSignals, PostgresSignals],
) -> None:
    one, two = replicas
    heard: list[str] = []

    def broken(payload: str) -> None:
        raise RuntimeError(payload)

    await one.subscribe("iac_code_test", broken, nothing)
    await one.subscribe("iac_code_test", heard.append, nothing)
    await two.publish("iac_code_test", "still")
    assert await until(lambda: heard == ["still"])


async def test_a_listener_opened_while_the_watch_waits_to_replace_none_is_kept_not_doubled(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch that listens again after a failure waits for the listen lock; a subscriber
    holding it meanwhile opens the listening connection itself. The watch used to open a
    second one beside it, never closed: every signal was delivered twice (a loaded run saw
    it through the first ping, which came while the first connection was still opening)."""
    real_connect = asyncpg.connect
    calls = 0

    async def server_coming_up(*args: object, **kwargs: object) -> asyncpg.Connection:
        nonlocal calls
        calls += 1
        if calls == 1:  # refused: the server is not up yet
            raise ConnectionRefusedError("the server is starting")
        if calls == 2:  # slow: the watch wakes up meanwhile and waits for the lock
            await asyncio.sleep(0.5)
        return await real_connect(*args, **kwargs)

    monkeypatch.setattr(asyncpg, "connect", server_coming_up)
    one, two = PostgresSignals(database, ping_seconds=60), PostgresSignals(database)
    heard_a: list[str] = []
    heard_b: list[str] = []
    resyncs: list[str] = []
    try:
        await one.subscribe("iac_code_a", heard_a.append, lambda: resyncs.append("a"))
        await one.subscribe("iac_code_b", heard_b.append, lambda: resyncs.append("b"))
        assert await until(lambda: "a" in resyncs)  # the watch has done its work
        await two.publish("iac_code_a", "x")
        await two.publish("iac_code_b", "done")  # published after: arrives after
        assert await until(lambda: heard_b == ["done"])
        assert heard_a == ["x"]
        admin = await real_connect(asyncpg_dsn(database))
        try:
            listening = await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        finally:
            await admin.close()
        assert listening == 1
    finally:
        await one.close()
        await two.close()


async def test_the_in_process_signals_call_subscribers_after_the_publisher_returns() -> None:
    signals: ClusterSignals = LocalSignals()
    heard: list[str] = []
    stop = await signals.subscribe("iac_code_test", heard.append, nothing)
    await signals.publish("iac_code_test", "one")
    assert heard == []  # never inside the publisher
    assert await until(lambda: heard == ["one"])
    await stop()
    await signals.publish("iac_code_test", "two")
    await asyncio.sleep(0)
    assert heard == ["one"]


def test_replicas_on_postgresql_signal_through_it_and_a_sqlite_server_in_memory() -> None:
    # Made without connecting: the first subscription or publication connects.
    assert isinstance(cluster_signals("postgresql+asyncpg://u@127.0.0.1:1/db"), PostgresSignals)
    assert isinstance(cluster_signals("sqlite+aiosqlite:///sessions.db"), LocalSignals)
