"""Where numbered `session/update`s are kept, and the records that let an HTTP connection
outlive the process that opened it.

A session's updates are numbered 1, 2, … (`seq`). The store keeps a bounded tail of them
per session: a client that reconnects with the last `seq` it received is sent exactly the
ones after it, or told that they are no longer kept."""

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True, slots=True, kw_only=True)
class JournaledUpdate:
    session_id: str
    seq: int
    created_at: datetime
    # The notification's params as every client was sent them, as JSON text: encoded once
    # when recorded, so that a batch waiting to be written holds one string per update.
    params: str


# (session id, seq, params as JSON text): what a batch to write holds, per update. A plain
# tuple: a fast stream makes thousands a second, each kept until its batch is written.
NewUpdate = tuple[str, int, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalWindow:
    """What is kept of a session after a cursor: `oldest`..`newest` are the kept seqs
    (0, 0 when nothing is), `updates` those after the cursor, in order."""

    oldest: int
    newest: int
    updates: Sequence[JournaledUpdate]


class UpdateJournalStore(Protocol):
    @abstractmethod
    async def newest(self, session_id: str) -> int:
        """The highest stored seq of the session (0: none)."""

    @abstractmethod
    async def append(self, at: datetime, updates: Sequence[NewUpdate]) -> None:
        """Store a batch, recorded by `at`, in one transaction. A seq already stored is
        left as it is."""

    @abstractmethod
    async def window(self, session_id: str, after: int, limit: int) -> JournalWindow:
        """The kept bounds and at most `limit` updates with seq > `after`."""

    @abstractmethod
    async def newest_containing(self, session_id: str, *pieces: str) -> str | None:
        """The newest kept update of the session whose stored text contains every piece
        (None: none does). Read rarely (a client attaching), never per update."""

    @abstractmethod
    async def prune(self, session_id: str, below: int) -> None:
        """Forget the session's updates with seq < `below`."""

    @abstractmethod
    async def prune_older_than(self, cutoff: datetime) -> None:
        """Forget updates stored before `cutoff`, except each session's newest (it holds
        the number the next update continues from)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionRecord:
    """What an HTTP connection needs to be taken up again by another process: its id, the
    client's capabilities, the sessions attached to it (their order names them in event
    ids) and the number its next event gets."""

    id: str
    client_capabilities: Any = None
    sessions: tuple[str, ...] = ()
    next_event: int = 1
    updated_at: datetime | None = field(default=None, compare=False)


class ConnectionRecords(Protocol):
    @abstractmethod
    async def save(self, record: ConnectionRecord) -> None: ...

    @abstractmethod
    async def get(self, connection_id: str) -> ConnectionRecord | None: ...

    @abstractmethod
    async def delete(self, connection_id: str) -> None: ...

    @abstractmethod
    async def prune_older_than(self, cutoff: datetime) -> None: ...
