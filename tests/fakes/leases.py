"""In-memory turn leases and replica presence, for tests of who runs a session's turn."""

from dataclasses import dataclass
from datetime import datetime

from application.ports.leases import LeaseState, ReplicaPresence, TurnLeases
from domain.ids import SessionId
from tests.fakes.sessions import InMemorySessionRepository


@dataclass
class _Lease:
    holder: str
    expires_at: datetime
    cancel_requested: bool = False


class InMemoryTurnLeases(TurnLeases):
    """Leases beside an in-memory store: a lease needs its session stored there, and goes
    with it. Versions are the stored sessions' own."""

    def __init__(self, sessions: InMemorySessionRepository) -> None:
        self.sessions = sessions
        self.leases: dict[SessionId, _Lease] = {}
        self.renewals = 0  # writes while a turn runs (a poll is a read)

    def _live(self, session_id: SessionId, now: datetime) -> _Lease | None:
        lease = self.leases.get(session_id)
        if session_id not in self.sessions.stored or lease is None or lease.expires_at <= now:
            return None
        return lease

    async def acquire(
        self,
        session_id: SessionId,
        holder: str,
        now: datetime,
        until: datetime,
        *,
        gone: str | None = None,
    ) -> bool:
        live = self._live(session_id, now)
        if session_id not in self.sessions.stored or (
            live is not None and live.holder not in (holder, gone)
        ):
            return False
        self.leases[session_id] = _Lease(holder, until)
        return True

    async def renew(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime
    ) -> LeaseState:
        self.renewals += 1
        state = await self.check(session_id, holder, now)
        if state.held:
            self.leases[session_id].expires_at = until
        return state

    async def check(self, session_id: SessionId, holder: str, now: datetime) -> LeaseState:
        live = self._live(session_id, now)
        if live is None or live.holder != holder:
            return LeaseState(held=False)
        return LeaseState(held=True, cancel_requested=live.cancel_requested)

    async def release(self, session_id: SessionId, holder: str) -> None:
        lease = self.leases.get(session_id)
        if lease is not None and lease.holder == holder:
            del self.leases[session_id]

    async def request_cancel(self, session_id: SessionId, now: datetime) -> bool:
        live = self._live(session_id, now)
        if live is not None:
            live.cancel_requested = True
        return live is not None

    async def live_holder(self, session_id: SessionId, now: datetime) -> str | None:
        live = self._live(session_id, now)
        return None if live is None else live.holder

    async def stored_version(self, session_id: SessionId) -> int | None:
        stored = self.sessions.stored.get(session_id)
        return None if stored is None else stored.version


class FakePresence(ReplicaPresence):
    """Holders a test declares exited."""

    def __init__(self) -> None:
        self.exited: set[str] = set()

    def here(self) -> None:
        pass

    def gone(self, holder: str) -> bool:
        return holder in self.exited
