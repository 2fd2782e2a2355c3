"""What the parts of the relay (adapters/cluster/relay.py) share: the channels they signal
on, the terms they keep, and each session's route (who else follows it, and what this
replica has delivered of it)."""

import asyncio
import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

ATTACHED_CHANNEL = "iac_code_at"
UPDATES_PREFIX = "iac_code_up_"


def updates_channel(replica_id: str) -> str:
    """The channel a replica hears its sessions' updates on (ids may hold `-` and capitals,
    which a channel name may not)."""
    return UPDATES_PREFIX + hashlib.sha256(replica_id.encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayTerms:
    lease_seconds: float = 30.0  # a replica that stops renewing is swept after this
    fill_patience: float = 10.0  # how long a gap is waited for in the journal
    max_queued: int = 50_000  # unsent updates kept while publishing fails (then: gaps)
    # A follower reads the journal's head once this long after a burst of updates ends:
    # a lost last notification has no later one to show its gap.
    tail_check_seconds: float = 1.0

    @property
    def renew_seconds(self) -> float:
        return self.lease_seconds / 3


# An update offered to a follower: its number, its params (None: read it from the journal),
# and the replica that sent it (None: not sent by one, e.g. the journal's head read again).
Offered = tuple[int, dict[str, Any] | None, str | None]


@dataclass(slots=True)
class Inbound:
    """A session this replica follows for its own clients: the newest number delivered, and
    the replica whose update that was (None: read from the journal, or numbered here)."""

    last: int
    by: str | None = None
    queue: deque[Offered] = field(default_factory=deque)
    worker: "asyncio.Task[None] | None" = None
    tail_check: asyncio.TimerHandle | None = None


@dataclass(slots=True)
class Route:
    """A session as the streaming path sees it: who else follows it, and whether we do."""

    targets: set[str] = field(default_factory=set)
    inbound: Inbound | None = None

    def idle(self) -> bool:
        return not self.targets and self.inbound is None
