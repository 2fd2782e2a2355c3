"""Turn leases between replicas whose clocks disagree. Each replica computes a lease's
expiry and judges other leases lapsed by its own clock, so one whose clock runs ahead by
more than a lease's length takes a live lease, and two turns of one session run at once.
Deciding by the database's clock (`now()` in the statements) would settle it."""

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.errors import SessionBusy
from application.runtime import TurnControl
from application.use_cases.turn_lease import LeaseTerms, TurnLeasing
from tests.factories import SessionFactory
from tests.fakes.ports import StoppedClock

pytestmark = pytest.mark.integration


@pytest.mark.xfail(
    strict=True,
    reason="leases are judged by each replica's own clock: one running ahead takes live leases",
)
async def test_a_replica_whose_clock_runs_ahead_does_not_take_a_live_lease(
    engine: AsyncEngine,
) -> None:
    session = SessionFactory()
    async with SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False)) as u:
        await u.sessions.add(session)
        await u.commit()
    leases = SqlAlchemyTurnLeases(engine)
    a_clock = StoppedClock()
    b_clock = StoppedClock(a_clock.current + timedelta(seconds=45))  # 45 s ahead
    a = TurnLeasing(leases=leases, clock=a_clock, terms=LeaseTerms(holder="a", seconds=30))
    b = TurnLeasing(leases=leases, clock=b_clock, terms=LeaseTerms(holder="b", seconds=30))
    held = await a.hold(session.id, TurnControl())
    try:
        with pytest.raises(SessionBusy):
            taken = await b.hold(session.id, TurnControl())
            await taken.release()
    finally:
        await held.release()
