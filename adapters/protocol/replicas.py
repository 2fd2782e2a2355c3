"""The other replicas sharing this one's database, as the protocol core sees them: the one
port through which the method handlers, the channels and the openers reach the cluster
(adapters/cluster implements it for replicas on PostgreSQL, which signal each other).

One process, or replicas on SQLite (one machine's, sharing leases but no signals), have
`OneProcess`: nothing is routed, followed or forwarded, but whether another live process
holds a session's turn still comes from the leases and the processes' presence."""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol

from application.attachments.turn_state import TurnState
from application.ports.leases import ReplicaPresence, TurnLeases
from domain.ids import SessionId

# A queueing client's prompt routed to the replica running the session's turn, whose
# dispatcher applies it (with the other routed methods) as its own client's.
QUEUED_METHOD = "$/iac_code/queued_prompt"

HeldElsewhere = Callable[[str], Awaitable[bool]]  # another process runs its turn (leases)


class HandBack(Exception):
    """Raised by the replica a request was routed to: it has no turn for it any more (a
    steering message its turn ended without, a session no longer open there). The sender
    applies it itself, as when no turn runs elsewhere."""


class NotRouted:
    """No turn runs on another replica (or its holder handed the request back): the
    request is the sender's own to apply."""


NOT_ROUTED = NotRouted()


class Replicas(Protocol):
    @abstractmethod
    async def to_holder(self, session_id: str, method: str, params: dict[str, Any]) -> Any:
        """The outcome of `method` applied by the replica running the session's turn;
        NOT_ROUTED when none runs elsewhere or it handed the request back. Raises the
        holder's RpcError, or an RpcError when the holder stopped before answering."""

    @abstractmethod
    async def queue_on_holder(
        self, session_id: str, queued: dict[str, Any], routed: Callable[[], None]
    ) -> Any:
        """A queueing client's prompt (`queued`, applied there as QUEUED_METHOD) waits in
        the queue of the replica running the session's turn, and runs there: its answer,
        or NOT_ROUTED as `to_holder`. `routed` is called once a holder is found, before the
        prompt is sent (from then on a cancel is for the running turn)."""

    @abstractmethod
    async def held_elsewhere(self, session_id: str) -> bool:
        """Whether another process that is still alive holds the session's turn lease."""

    @abstractmethod
    async def follow(self, session_id: str) -> TurnState | None:
        """Before a client's replay is read: follow the session's updates numbered on
        other replicas from the journal's head on; the turn another replica runs, if one
        does (None: none, or not known)."""

    @abstractmethod
    def forward(self, session_id: str, params: dict[str, Any]) -> None:
        """A numbered update of the session, to the replicas whose clients follow it. On
        the streaming path: it never waits."""


class OneProcess(Replicas):
    """No replicas to signal: requests are all this process's own."""

    def __init__(self, held_elsewhere: HeldElsewhere | None = None) -> None:
        self._held_elsewhere = held_elsewhere

    async def to_holder(self, session_id: str, method: str, params: dict[str, Any]) -> Any:
        return NOT_ROUTED

    async def queue_on_holder(
        self, session_id: str, queued: dict[str, Any], routed: Callable[[], None]
    ) -> Any:
        return NOT_ROUTED

    async def held_elsewhere(self, session_id: str) -> bool:
        return self._held_elsewhere is not None and await self._held_elsewhere(session_id)

    async def follow(self, session_id: str) -> TurnState | None:
        return None

    def forward(self, session_id: str, params: dict[str, Any]) -> None:
        return None


def live_elsewhere(
    leases: TurnLeases, presence: ReplicaPresence, now: Callable[[], datetime], holder: str
) -> HeldElsewhere:
    """Whether another process that is still alive holds the session's turn lease: a dead
    one's lease may not have lapsed yet, and its queue is gone with it."""

    async def check(session_id: str) -> bool:
        live = await leases.live_holder(SessionId(session_id), now())
        return live is not None and live != holder and not presence.gone(live)

    return check
