"""uvicorn's WebSocket protocol (websockets, sans-I/O), with what ASGI cannot say.

ASGI has no message for "stop this slow peer now" nor a say in how the server closes sockets
when it stops. uvicorn 0.54 closes them with 1012 (service restart); a server going away
says 1001. And an application's `websocket.close` waits, like every send, until a slow
reader has made room: a peer too far behind could never be closed. This subclass closes
sockets with 1001 on shutdown, and puts an `abort(code, reason)` into the scope's
extensions (`ABORT`) that closes the socket at once, without waiting for room.

Everything here leans on uvicorn's protocol internals (`conn`, `transport`, `queue`,
`close_sent`); tests/http/test_websocket.py covers each use.
"""

from collections.abc import Callable
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from adapters.http.config import HttpConfig

ABORT = "iac-code.websocket.abort"
GOING_AWAY = 1001
SHUTDOWN_REASON = "the server is shutting down"
# After an abort, the close frame waits behind what the peer has not read: it gets this long
# to read it (and see why), then the TCP connection is cut.
ABORT_DRAIN_SECONDS = 5.0

Abort = Callable[[int, str], None]


class AcpWebSocketProtocol(WebSocketsSansIOProtocol):
    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # absent when the handshake itself was refused
        if scope is not None:
            scope["extensions"][ABORT] = {"abort": self.abort}

    def abort(self, code: int, reason: str) -> None:
        """Close now with `code`: the app learns it as a disconnect, the peer as a close
        frame if it reads that far within ABORT_DRAIN_SECONDS."""
        if self.close_sent or self.transport.is_closing():
            return
        self.stop_keepalive()
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self.conn.send_close(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()  # writes what is buffered first ...
        self.loop.call_later(ABORT_DRAIN_SECONDS, self.transport.abort)  # ... for so long

    def shutdown(self) -> None:
        if self.handshake_complete and not self.close_sent and not self.transport.is_closing():
            self.abort(GOING_AWAY, SHUTDOWN_REASON)
            return
        super().shutdown()


def websocket_options(config: HttpConfig) -> dict[str, Any]:
    """uvicorn.Config options of the WebSocket transport (the server and the tests use them)."""
    return {
        "ws": AcpWebSocketProtocol,
        # One message per frame: a larger one closes the socket with 1009 before it is read.
        "ws_max_size": config.max_body_bytes,
        "ws_ping_interval": config.ws_ping_interval_seconds,
        "ws_ping_timeout": config.ws_ping_timeout_seconds,
    }
