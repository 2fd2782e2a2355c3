"""Turn leases: at most one process (replica) runs a turn of a session at a time.

A lease names its holder and an expiry; the holder renews it while the turn runs. A
holder that died stops renewing, and its lease lapses. Each call is its own short
transaction, committed before it returns."""

from abc import abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.ids import SessionId


@dataclass(frozen=True, slots=True)
class LeaseState:
    """What a holder learns of its lease: still its own, and whether a cancel was asked."""

    held: bool
    cancel_requested: bool = False


class TurnLeases(Protocol):
    @abstractmethod
    async def acquire(
        self,
        session_id: SessionId,
        holder: str,
        now: datetime,
        until: datetime,
        *,
        gone: str | None = None,
    ) -> bool:
        """Take the lease until `until` if nobody else holds a live one (a lapsed lease is
        taken over; the holder's own is renewed; so is a live one of `gone`, a holder known
        to have exited). False: held elsewhere, or no such session. A lease taken starts
        with no cancel requested."""

    @abstractmethod
    async def renew(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime
    ) -> LeaseState:
        """Extend the holder's live lease to `until`. Not held: it lapsed or another holder
        has it (the holder's turn must stop)."""

    @abstractmethod
    async def check(self, session_id: SessionId, holder: str, now: datetime) -> LeaseState:
        """The holder's lease as stored, without writing (the cheap, frequent poll)."""

    @abstractmethod
    async def release(self, session_id: SessionId, holder: str) -> None:
        """Give the lease up; nothing happens if `holder` no longer has it."""

    @abstractmethod
    async def request_cancel(self, session_id: SessionId, now: datetime) -> bool:
        """Ask the holder of the live lease to cancel its turn. False: no live lease."""

    @abstractmethod
    async def live_holder(self, session_id: SessionId, now: datetime) -> str | None:
        """Who holds a live lease on the session, if anyone."""

    @abstractmethod
    async def stored_version(self, session_id: SessionId) -> int | None:
        """The session's stored version (None: no such session): a copy read at another
        version is stale. Here rather than on the session store: it is the one read made
        before every turn, and it needs no more than one column."""


class ReplicaPresence(Protocol):
    """Which holders are known to have exited, so that their leases need not lapse first
    (a restarted agent takes its sessions back at once). Unknown is never gone."""

    @abstractmethod
    def here(self) -> None:
        """Mark this process as running, until it exits (however it exits)."""

    @abstractmethod
    def gone(self, holder: str) -> bool:
        """True only when `holder` certainly runs no more."""
