"""Turn leases between replicas whose clocks disagree. Were each replica to compute a
lease's expiry and judge other leases lapsed by its own clock, one whose clock runs ahead by
more than a lease's length would take a live lease, and two turns of one session would run.
On PostgreSQL the leases go by the database's clock instead (`now()`), which settles it."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.errors import SessionBusy
from application.runtime.turn_control import TurnControl
from application.sessions.turn_lease import LeaseTerms, TurnLeasing
from tests.factories import SessionFactory
from tests.fakes.leases import FakePresence
from tests.fakes.time_and_ids import StoppedClock

# Several machines share only a PostgreSQL store (SQLite replicas share one machine's clock).
pytestmark = [pytest.mark.integration, pytest.mark.backends("postgres")]


async def test_a_replica_whose_clock_runs_ahead_does_not_take_a_live_lease(
    engine: AsyncEngine,
) -> None:
    session = SessionFactory()
    async with SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False)) as u:
        await u.sessions.add(session)
        await u.commit()
    leases = SqlAlchemyTurnLeases(engine, database_clock=True)
    a_clock = StoppedClock()
    b_clock = StoppedClock(a_clock.current + timedelta(seconds=45))  # 45 s ahead
    a = TurnLeasing(
        leases=leases,
        clock=a_clock,
        terms=LeaseTerms(holder="a", seconds=30),
        presence=FakePresence(),
    )
    b = TurnLeasing(
        leases=leases,
        clock=b_clock,
        terms=LeaseTerms(holder="b", seconds=30),
        presence=FakePresence(),
    )
    held = await a.hold(session.id, TurnControl())
    try:
        with pytest.raises(SessionBusy):
            taken = await b.hold(session.id, TurnControl())
            await taken.release()
    finally:
        await held.release()


async def test_a_lease_lapses_by_the_databases_clock_whatever_its_holders_says(
    engine: AsyncEngine,
) -> None:
    """A holder whose clock runs an hour ahead still frees the session after the lease's
    length, not an hour later."""
    session = SessionFactory()
    async with SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False)) as u:
        await u.sessions.add(session)
        await u.commit()
    leases = SqlAlchemyTurnLeases(engine, database_clock=True)
    ahead = datetime.now(UTC) + timedelta(hours=1)
    # A takes a 0.3 s lease and never renews it, as a replica that died would.
    assert await leases.acquire(session.id, "a", ahead, ahead + timedelta(seconds=0.3))
    b = TurnLeasing(
        leases=leases, clock=StoppedClock(), terms=LeaseTerms(holder="b"), presence=FakePresence()
    )
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        try:
            taken = await b.hold(session.id, TurnControl())
            break
        except SessionBusy:
            assert asyncio.get_running_loop().time() < deadline, "the lease never lapsed"
            await asyncio.sleep(0.05)
    await taken.release()
