"""One contract for turn leases: the SQL implementation on SQLite and PostgreSQL, and the
in-memory fake the use-case tests use."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.tables import sessions
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.ports.leases import LeaseState, TurnLeases
from application.ports.unit_of_work import UnitOfWork
from domain.ids import SessionId
from tests.factories import T0, SessionFactory
from tests.fakes.leases import InMemoryTurnLeases
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.unit_of_work import FakeUnitOfWork

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]

A, B = "replica-a", "replica-b"
LATER = T0 + timedelta(seconds=30)


@dataclass
class Store:
    uow: Callable[[], UnitOfWork]
    leases: TurnLeases
    bump: Callable[[SessionId], Awaitable[None]]  # another writer's change: version + 1

    async def session(self) -> SessionId:
        session = SessionFactory()
        async with self.uow() as u:
            await u.sessions.add(session)
            await u.commit()
        return session.id


@pytest.fixture
def store(backend: str, engine: AsyncEngine) -> Store:
    if backend == "memory":
        repository = InMemorySessionRepository()

        async def bump_memory(session_id: SessionId) -> None:
            repository.stored[session_id].version += 1

        return Store(
            lambda: FakeUnitOfWork(repository), InMemoryTurnLeases(repository), bump_memory
        )
    factory = async_sessionmaker(engine, expire_on_commit=False)

    async def bump_sql(session_id: SessionId) -> None:
        async with engine.begin() as db:
            change = update(sessions).where(sessions.c.id == session_id)
            await db.execute(change.values(version=sessions.c.version + 1))

    return Store(lambda: SqlAlchemyUnitOfWork(factory), SqlAlchemyTurnLeases(engine), bump_sql)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_a_free_session_is_taken_and_then_refused_to_others(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert not await store.leases.acquire(sid, B, at(1), at(31))
    assert await store.leases.live_holder(sid, at(1)) == A


async def test_the_holder_takes_its_own_lease_again(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert await store.leases.acquire(sid, A, at(1), at(60))  # e.g. restarted with its id
    assert await store.leases.check(sid, A, at(45)) == LeaseState(held=True)


async def test_a_lapsed_lease_is_taken_over(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert await store.leases.acquire(sid, B, at(30), at(60))  # expiry is exclusive
    assert await store.leases.live_holder(sid, at(31)) == B
    assert await store.leases.renew(sid, A, at(31), at(61)) == LeaseState(held=False)


async def test_no_lease_on_a_session_that_is_not_stored(store: Store) -> None:
    assert not await store.leases.acquire(SessionId("sess_missing"), A, T0, at(30))
    assert await store.leases.live_holder(SessionId("sess_missing"), T0) is None


async def test_renewal_extends_only_the_holders_live_lease(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert await store.leases.renew(sid, A, at(10), at(40)) == LeaseState(held=True)
    assert await store.leases.check(sid, A, at(35)) == LeaseState(held=True)
    assert await store.leases.renew(sid, B, at(11), at(41)) == LeaseState(held=False)
    assert not await store.leases.acquire(sid, B, at(35), at(65))
    # Lapsed: the holder's turn must stop even though nobody took the lease yet.
    assert await store.leases.renew(sid, A, at(40), at(70)) == LeaseState(held=False)
    assert await store.leases.check(sid, A, at(40)) == LeaseState(held=False)


async def test_a_cancel_reaches_the_holder_and_ends_with_the_lease(store: Store) -> None:
    sid = await store.session()
    assert not await store.leases.request_cancel(sid, T0)  # nobody runs a turn
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert await store.leases.check(sid, A, at(1)) == LeaseState(held=True)
    assert await store.leases.request_cancel(sid, at(2))
    assert await store.leases.check(sid, A, at(3)) == LeaseState(True, cancel_requested=True)
    assert await store.leases.renew(sid, A, at(4), at(34)) == LeaseState(True, True)
    await store.leases.release(sid, A)
    assert await store.leases.acquire(sid, A, at(5), at(35))  # a new turn: no cancel
    assert await store.leases.check(sid, A, at(6)) == LeaseState(held=True)


async def test_a_cancel_does_not_reach_a_lapsed_lease(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert not await store.leases.request_cancel(sid, at(30))
    assert await store.leases.acquire(sid, B, at(31), at(61))
    assert await store.leases.check(sid, B, at(32)) == LeaseState(held=True)


async def test_release_frees_the_session_only_for_its_holder(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    await store.leases.release(sid, B)
    assert await store.leases.live_holder(sid, at(1)) == A
    await store.leases.release(sid, A)
    assert await store.leases.live_holder(sid, at(1)) is None
    assert await store.leases.acquire(sid, B, at(1), at(31))
    await store.leases.release(sid, A)  # A's lease is gone: nothing happens
    assert await store.leases.live_holder(sid, at(2)) == B


async def test_leases_of_sessions_are_independent(store: Store) -> None:
    one, two = await store.session(), await store.session()
    assert await store.leases.acquire(one, A, T0, at(30))
    assert await store.leases.acquire(two, B, T0, at(30))
    assert await store.leases.request_cancel(two, at(1))
    assert await store.leases.check(one, A, at(2)) == LeaseState(held=True)


async def test_concurrent_takers_get_one_lease(store: Store) -> None:
    sid = await store.session()
    holders = [f"replica-{n}" for n in range(5)]
    taken = await asyncio.gather(*(store.leases.acquire(sid, h, T0, at(30)) for h in holders))
    assert sorted(taken) == [False] * 4 + [True]
    winner = holders[taken.index(True)]
    assert await store.leases.live_holder(sid, at(1)) == winner


async def test_concurrent_takeovers_of_a_lapsed_lease_get_one(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    holders = [f"replica-{n}" for n in range(5)]
    taken = await asyncio.gather(*(store.leases.acquire(sid, h, at(31), at(61)) for h in holders))
    assert sorted(taken) == [False] * 4 + [True]


async def test_the_stored_version_is_read(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.stored_version(sid) == 0
    await store.bump(sid)
    await store.bump(sid)
    assert await store.leases.stored_version(sid) == 2
    assert await store.leases.stored_version(SessionId("sess_missing")) is None


async def test_a_deleted_session_has_no_version_and_no_lease(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    async with store.uow() as u:
        assert await u.sessions.delete(sid, T0)
        await u.commit()
    assert await store.leases.stored_version(sid) is None
    assert await store.leases.live_holder(sid, at(1)) is None
    assert not await store.leases.acquire(sid, B, at(1), at(31))


async def test_the_live_lease_of_a_holder_that_exited_is_taken_when_named(store: Store) -> None:
    sid = await store.session()
    assert await store.leases.acquire(sid, A, T0, at(30))
    assert await store.leases.request_cancel(sid, at(1))
    assert not await store.leases.acquire(sid, B, at(1), at(31), gone="replica-c")
    assert await store.leases.acquire(sid, B, at(1), at(31), gone=A)
    assert await store.leases.check(sid, B, at(2)) == LeaseState(held=True)  # no cancel
    assert await store.leases.renew(sid, A, at(2), at(32)) == LeaseState(held=False)


async def test_a_session_deleted_while_its_forks_live_has_no_lease(store: Store) -> None:
    # Deleting a session that has forks only hides its row (the forks still read its
    # messages): it is deleted all the same, and a turn of it must not start.
    sid = await store.session()
    async with store.uow() as u:
        parent = await u.sessions.get(sid)
        assert parent is not None
        await u.sessions.fork(parent, parent.fork(SessionId(f"{sid}_fork"), at=T0))
        assert await u.sessions.delete(sid, T0)
        await u.commit()
    assert await store.leases.stored_version(sid) is None
    assert not await store.leases.acquire(sid, A, at(1), at(31))
    assert await store.leases.live_holder(sid, at(2)) is None
