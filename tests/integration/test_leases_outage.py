"""Turn leases when the database cannot be reached: every call fails as a StorageError, the
one failure a running turn's lease watcher rides out (it retries at its next period) and a
turn's end tolerates when it gives the lease up. Any other exception would end the watcher
for good (no renewal, no cancel seen) or fail a finished turn."""

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.engine import make_engine
from adapters.persistence.leases import SqlAlchemyTurnLeases
from application.errors import StorageError
from domain.ids import SessionId
from tests.factories import T0

pytestmark = pytest.mark.integration

SID = SessionId("sess_outage")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def unreachable() -> AsyncIterator[AsyncEngine]:
    # asyncpg's refused connection is an OSError that SQLAlchemy does not wrap.
    engine = make_engine(f"postgresql+asyncpg://postgres@127.0.0.1:{closed_port()}/test")
    yield engine
    await engine.dispose()


CALLS: dict[str, Callable[[SqlAlchemyTurnLeases], Awaitable[object]]] = {
    "acquire": lambda leases: leases.acquire(SID, "a", T0, T0 + timedelta(seconds=30)),
    "renew": lambda leases: leases.renew(SID, "a", T0, T0 + timedelta(seconds=30)),
    "check": lambda leases: leases.check(SID, "a", T0),
    "release": lambda leases: leases.release(SID, "a"),
    "request_cancel": lambda leases: leases.request_cancel(SID, T0),
    "live_holder": lambda leases: leases.live_holder(SID, T0),
    "stored_version": lambda leases: leases.stored_version(SID),
}


@pytest.mark.parametrize("call", CALLS)
async def test_every_lease_call_fails_as_a_storage_error(
    unreachable: AsyncEngine, call: str
) -> None:
    with pytest.raises(StorageError):
        await CALLS[call](SqlAlchemyTurnLeases(unreachable))
