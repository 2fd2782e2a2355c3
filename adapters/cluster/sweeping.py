"""The turns a dead replica was running (issue 32): a replica that stops renewing its row
is swept by the first replica to notice (following.py's heartbeat); its attachments
and turn leases go, and each session whose turn it was running gets an `interrupted`
notice, numbered once and relayed to every follower like any update."""

import logging
import uuid
from collections.abc import Iterable
from datetime import timedelta

from adapters.cluster.relaying import Relaying
from application.attachments.turn_state import TurnPhase
from domain.events import Notice, NoticeSeverity, SessionNotice
from domain.ids import MessageId, SessionId

log = logging.getLogger(__name__)

_INTERRUPTED_TEXT = "The server running this turn stopped; the session is idle again."


class DeadTurns:
    """Sessions whose turn's holder was swept, until their clients are told."""

    def __init__(self, relaying: Relaying) -> None:
        self._me = relaying.replica_id
        self._channels = relaying.channels
        self._journal = relaying.journal
        self._store = relaying.store
        self._registry = relaying.registry
        self._leases = relaying.leases
        self._now = relaying.now
        self._terms = relaying.terms
        self._pending: dict[str, str] = {}  # session -> the dead holder of its turn

    async def settle(self, interrupted: Iterable[tuple[str, str]]) -> None:
        """Add the sweep's interrupted turns (session, holder), and tell those whose
        leases have lapsed."""
        self._pending.update(interrupted)
        for session_id, holder in list(self._pending.items()):
            if await self._interrupted(session_id, holder):
                del self._pending[session_id]

    async def _interrupted(self, session_id: str, holder: str) -> bool:
        """Tell every client of the session (through the journal: numbered once, here)
        that its turn ended with the replica running it, once its lease has lapsed (a
        replica swept while it was only slow still renews its turns' leases). The lapsed
        lease is taken first and given up after: no new turn begins before the notice is
        numbered. True: done with (told, or another holder took the lease meanwhile)."""
        sid, lease = SessionId(session_id), self._terms.lease_seconds
        if await self._registry.is_live(holder, self._now()):
            return True  # it was only slow, and beats again: its turn is its own
        live = await self._leases.live_holder(sid, self._now())
        if live == holder:
            return False  # not lapsed yet: the next beat looks again
        # Not our own id: a turn of ours that took the lapsed lease must not be taken.
        sweeper = f"{self._me}/sweeper"
        moment = self._now()
        until = moment + timedelta(seconds=lease)
        if live is not None or not await self._leases.acquire(sid, sweeper, moment, until):
            return True  # a new turn took it over: that is what its clients see now
        try:
            await self._tell_interrupted(session_id, holder)
        finally:
            await self._leases.release(sid, sweeper)
        return True

    async def _tell_interrupted(self, session_id: str, holder: str) -> None:
        log.warning("session %s: its turn ended with replica %s", session_id, holder)
        self._journal.follow_on(session_id, await self._store.newest(session_id))
        notice = SessionNotice(
            severity=NoticeSeverity.WARNING,
            title="Turn interrupted",
            description=_INTERRUPTED_TEXT,
            meta={"reason": "replica_gone", "turn": {"state": TurnPhase.IDLE.value}},
            fallback=Notice(
                message_id=MessageId(f"interrupted-{uuid.uuid4().hex}"),
                text=f"\n\n[{_INTERRUPTED_TEXT}]",
            ),
        )
        await self._channels.emit(SessionId(session_id), notice)
