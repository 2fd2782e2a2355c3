"""Signals between the replicas that share one database: short text messages on named
channels (PostgreSQL: LISTEN/NOTIFY; one process on SQLite: in memory).

A signal says that something changed (a session's journal grew, a request waits for the
turn's holder); what changed is read from the database, or carried in the payload when it
is small. Delivery is at most once: a listener that lost its connection is told
(`on_resync`) once it listens again, and reads from the database what it may have missed.
"""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Protocol

# Channel names are lower-case letters, digits and underscores, at most 63 characters
# (PostgreSQL's identifier limit); payloads at most MAX_PAYLOAD bytes of UTF-8 (below
# PostgreSQL's 8,000-byte NOTIFY limit).
MAX_PAYLOAD = 7_000

Unsubscribe = Callable[[], Awaitable[None]]


class ClusterSignals(Protocol):
    @abstractmethod
    async def publish(self, channel: str, payload: str) -> None:
        """Send `payload` to every subscriber of `channel`, on every replica (this one
        included), after the caller's own committed writes are visible to them."""

    @abstractmethod
    async def subscribe(
        self,
        channel: str,
        on_message: Callable[[str], None],
        on_resync: Callable[[], None],
    ) -> Unsubscribe:
        """Call `on_message` (on the event loop, never blocking the publisher) for each
        payload published on `channel` from now on; `on_resync` after the connection that
        listens was lost and is back (signals may have been missed meanwhile)."""

    @abstractmethod
    async def close(self) -> None:
        """Stop listening and release the connection."""
