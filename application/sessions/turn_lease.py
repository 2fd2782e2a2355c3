"""One turn per session across every process sharing the store: the turn's lease.

The in-process check (ActiveSession.begin_turn) comes first and stays the cheap answer;
the lease settles it between processes. While the turn runs, a watcher renews the lease
every third of its length and polls, between renewals, for a cancel asked elsewhere: a
read every `poll` seconds, a write every `seconds / 3`, nothing per streamed delta."""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from application.errors import SessionBusy, SessionNotFound, StorageError
from application.ports.clock import Clock
from application.ports.leases import LeaseState, ReplicaPresence, TurnLeases
from application.runtime.turn_control import TurnControl
from domain.ids import SessionId

log = logging.getLogger(__name__)

# Tells a lease's holder (another replica) that a cancel waits in its lease: it looks at
# once instead of at its next poll, which stays the safety net (signals may be lost).
Nudge = Callable[[str, SessionId], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseTerms:
    holder: str  # this process's replica id
    seconds: float = 30.0  # a lease lasts this long unless renewed
    poll: float = 0.5  # at most this long before a cancel asked elsewhere is seen

    @property
    def renew_every(self) -> float:
        return self.seconds / 3

    @property
    def poll_every(self) -> float:
        return min(self.poll, self.renew_every)


class TurnLeasing:
    def __init__(
        self,
        *,
        leases: TurnLeases,
        clock: Clock,
        terms: LeaseTerms,
        presence: ReplicaPresence,
    ) -> None:
        self._leases = leases
        self._clock = clock
        self.terms = terms
        self._presence = presence
        self._held: dict[SessionId, HeldLease] = {}  # the leases this process holds
        self._nudge: Nudge | None = None

    def nudge_with(self, nudge: Nudge) -> None:
        """How another replica's holder is told of a cancel (replicas on PostgreSQL)."""
        self._nudge = nudge

    def poke(self, session_id: SessionId) -> None:
        """A cancel may wait in the lease of a turn running here: look now."""
        held = self._held.get(session_id)
        if held is not None:
            held.poke()

    async def hold(self, session_id: SessionId, control: TurnControl) -> "HeldLease":
        """The session's lease for the turn `control` runs, watched until released.
        Raises SessionBusy when another process runs a turn of it, SessionNotFound when
        another process deleted it."""
        now = self._clock.now()
        until = now + timedelta(seconds=self.terms.seconds)
        if not await self._take(session_id, now, until):
            if await self._leases.stored_version(session_id) is None:
                raise SessionNotFound(
                    f"Session {session_id!r} no longer exists: it was deleted elsewhere.",
                    sessionId=session_id,
                )
            raise SessionBusy(
                "A prompt is already running in this session; cancel it or wait for its answer.",
                sessionId=session_id,
            )
        held = HeldLease(self._leases, self._clock, self.terms, session_id, control)
        self._held[session_id] = held
        held.on_release(lambda: self._forget(session_id, held))
        return held

    def _forget(self, session_id: SessionId, held: "HeldLease") -> None:
        if self._held.get(session_id) is held:
            del self._held[session_id]

    async def _take(self, session_id: SessionId, now: datetime, until: datetime) -> bool:
        me = self.terms.holder
        if await self._leases.acquire(session_id, me, now, until):
            return True
        holder = await self._leases.live_holder(session_id, now)
        if holder is None or not self._exited(holder):
            return False
        log.info("session %s: taking the lease of replica %s, which exited", session_id, holder)
        return await self._leases.acquire(session_id, me, now, until, gone=holder)

    def _exited(self, holder: str) -> bool:
        return self._presence.gone(holder)

    async def running_elsewhere(self, session_id: SessionId) -> bool:
        """Another process holds a live lease: its turn may still be writing the session."""
        holder = await self._leases.live_holder(session_id, self._clock.now())
        return holder is not None and holder != self.terms.holder and not self._exited(holder)

    async def request_cancel(self, session_id: SessionId) -> bool:
        """Set the cancel flag of the session's live lease (its holder sees it at its next
        poll) and nudge the holder, if it is another replica, to look now."""
        asked = await self._leases.request_cancel(session_id, self._clock.now())
        if asked and self._nudge is not None:
            holder = await self._leases.live_holder(session_id, self._clock.now())
            if holder is not None and holder != self.terms.holder:
                await self._nudge(holder, session_id)
        return asked

    async def stored_version(self, session_id: SessionId) -> int | None:
        return await self._leases.stored_version(session_id)


class HeldLease:
    """A lease taken for one turn: renewed and watched until `release`."""

    def __init__(
        self,
        leases: TurnLeases,
        clock: Clock,
        terms: LeaseTerms,
        session_id: SessionId,
        control: TurnControl,
    ) -> None:
        self._leases = leases
        self._clock = clock
        self._terms = terms
        self._session_id = session_id
        self._control = control
        self._poked = asyncio.Event()
        self._released: list[Callable[[], None]] = []
        self._watcher = asyncio.create_task(self._watch(), name=f"lease {session_id}")

    def poke(self) -> None:
        """Look at the lease now (a cancel may have been asked), not at the next poll."""
        self._poked.set()

    def on_release(self, listener: Callable[[], None]) -> None:
        self._released.append(listener)

    async def release(self) -> None:
        """Stop watching and give the lease up, whatever the turn's outcome. A failure
        here is only logged: the lease then lapses on its own."""
        self._watcher.cancel()
        await asyncio.gather(self._watcher, return_exceptions=True)
        for listener in self._released:
            listener()
        try:
            await self._leases.release(self._session_id, self._terms.holder)
        except StorageError:
            log.warning("could not release the lease of session %s", self._session_id)

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        renew_at = loop.time() + self._terms.renew_every
        while True:
            # A period, not a synchronisation; a poke cuts it short.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poked.wait(), self._terms.poll_every)
            self._poked.clear()
            renewing = loop.time() >= renew_at
            try:
                state = await self._look(renewing)
            except StorageError:
                log.warning("could not renew the lease of session %s", self._session_id)
                continue
            if renewing:
                renew_at = loop.time() + self._terms.renew_every
            if not state.held:
                log.warning("lost the lease of session %s: its turn stops", self._session_id)
                self._control.cancelled.set()
                return
            if state.cancel_requested:
                self._control.cancelled.set()

    async def _look(self, renewing: bool) -> LeaseState:
        now = self._clock.now()
        if renewing:
            until = now + timedelta(seconds=self._terms.seconds)
            return await self._leases.renew(self._session_id, self._terms.holder, now, until)
        return await self._leases.check(self._session_id, self._terms.holder, now)
