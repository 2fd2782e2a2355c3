from adapters.protocol.connection import Connection
from adapters.protocol.wire import notification_for
from application.ports.event_sink import EventSink
from domain.events import AgentEvent
from domain.ids import SessionId


class SessionChannels(EventSink):
    """Routes each session's updates to the connection that opened it."""

    def __init__(self) -> None:
        self._peers: dict[str, Connection] = {}

    def attach(self, session_id: str, peer: Connection) -> None:
        self._peers[session_id] = peer

    def detach(self, session_id: str) -> None:
        self._peers.pop(session_id, None)

    def peer_of(self, session_id: str) -> Connection | None:
        return self._peers.get(session_id)

    def sessions_of(self, peer: Connection) -> list[str]:
        return [sid for sid, p in self._peers.items() if p is peer]

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        peer = self._peers.get(session_id)
        if peer is not None:
            await peer.send_notification("session/update", notification_for(session_id, event))
