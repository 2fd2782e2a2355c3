"""Which replicas have clients attached to which session, and which replicas are alive:
the registry that lets a replica signal a session's updates to exactly the replicas whose
clients follow it (issue 32). Each call is its own short transaction."""

from abc import abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Swept:
    """What a sweep removed: replicas whose lease lapsed; and the sessions whose turn lease
    one of them still held (its turn died with it), with that holder."""

    replicas: tuple[str, ...] = ()
    interrupted: tuple[tuple[str, str], ...] = ()


class ClusterAttachments(Protocol):
    @abstractmethod
    async def renew(self, replica_id: str, now: datetime, seconds: float) -> bool:
        """This replica is alive for `seconds` more. False: it had no row (first start,
        or swept as dead while it was only slow): its attachments are gone too."""

    @abstractmethod
    async def attach(self, session_id: str, replica_id: str, clients: int, now: datetime) -> None:
        """`replica_id` has `clients` clients attached to the session (0: none, removed)."""

    @abstractmethod
    async def watchers(self, now: datetime) -> dict[str, set[str]]:
        """Each session's replicas with clients attached, among the live replicas."""

    @abstractmethod
    async def is_live(self, replica_id: str, now: datetime) -> bool:
        """Whether the replica's row is there and its lease not lapsed."""

    @abstractmethod
    async def sweep(self, now: datetime) -> Swept:
        """Remove the replicas whose lease lapsed and their attachments, and find the turn
        leases they still hold (left for the caller to take over). A replica's row is
        removed by one sweeper only: it alone is told."""

    @abstractmethod
    async def leave(self, replica_id: str) -> None:
        """This replica stops: its row and its attachments go (no lease to wait out)."""
