"""What the HTTP transport needs to take up a connection another process opened (before a
restart, or on another replica): its stored record, and each session's missed updates."""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from adapters.protocol.connection import Connection
from application.ports.update_journal import ConnectionRecord


class Revival(Protocol):
    @abstractmethod
    async def stored(self, connection_id: str) -> ConnectionRecord | None: ...

    @abstractmethod
    async def save(self, record: ConnectionRecord) -> None: ...

    @abstractmethod
    async def forget(self, connection_id: str) -> None: ...

    @abstractmethod
    async def reattach(self, session_id: str, peer: Connection) -> None:
        """The session's live updates go to `peer` from now on."""

    @abstractmethod
    async def catch_up(self, session_id: str, after: int) -> list[dict[str, Any]]:
        """The messages a client that has the session's updates up to `after` is owed: first
        one telling the session's turn state, then the missed updates. Raises CursorExpired
        (adapters.protocol.journal) when they are not all kept."""


# The agent loads in the background: the revival is there once it has (None: not served).
RevivalSource = Callable[[], Awaitable[Revival | None]]
