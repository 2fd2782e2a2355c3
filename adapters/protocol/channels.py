from abc import abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from adapters.protocol.connection import Connection
from adapters.protocol.wire import notification_for
from application.ports.event_sink import EventSink
from domain.events import AgentEvent
from domain.ids import SessionId


class UpdateLog(Protocol):
    """Sees each live `session/update` once, before any client: returns the params every
    client is sent (e.g. numbered). Replays of stored history are not recorded."""

    @abstractmethod
    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]: ...


class SessionChannels(EventSink):
    """Routes each session's updates to the connection that opened it."""

    def __init__(self, *, update_log: UpdateLog | None = None) -> None:
        self._peers: dict[str, Connection] = {}
        self._log = update_log
        self._replaying: dict[str, bool] = {}  # session -> replay muted

    def attach(self, session_id: str, peer: Connection) -> None:
        self._peers[session_id] = peer

    def detach(self, session_id: str) -> None:
        self._peers.pop(session_id, None)

    def peer_of(self, session_id: str) -> Connection | None:
        return self._peers.get(session_id)

    def sessions_of(self, peer: Connection) -> list[str]:
        return [sid for sid, p in self._peers.items() if p is peer]

    @contextmanager
    def replaying(self, session_id: str, *, silent: bool = False) -> Iterator[None]:
        """Updates emitted meanwhile replay stored history: they are not recorded again
        (and, `silent`, not sent: a client loading with a cursor gets the journal's)."""
        self._replaying[session_id] = silent
        try:
            yield
        finally:
            self._replaying.pop(session_id, None)

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        replaying = self._replaying.get(session_id)
        if replaying:
            return
        params = notification_for(session_id, event)
        if self._log is not None and replaying is None:
            params = await self._log.record(session_id, params)
        peer = self._peers.get(session_id)
        if peer is not None:
            await peer.send_notification("session/update", params)
