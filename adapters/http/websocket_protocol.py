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

import logging
import time
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

INVALID_PAYLOAD = 1007
INVALID_UTF8_REASON = "a text frame must be valid UTF-8"
# uvicorn logs a traceback at ERROR for each such frame: one client could fill the log.
INVALID_UTF8_LOG_INTERVAL_SECONDS = 10.0

log = logging.getLogger(__name__)


class RateLimitedWarning:
    """A WARNING line at most once per `interval` seconds; the next one written says how
    many were left out meanwhile."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = interval
        self._clock = clock
        self._last: float | None = None
        self._suppressed = 0

    def warn(self, message: str, *args: object) -> None:
        now = self._clock()
        if self._last is not None and now - self._last < self._interval:
            self._suppressed += 1
            return
        if self._suppressed:
            message += f" ({self._suppressed} more since the last such line, not logged)"
        log.warning(message, *args)
        self._last, self._suppressed = now, 0


invalid_utf8 = RateLimitedWarning(INVALID_UTF8_LOG_INTERVAL_SECONDS)


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

    def send_receive_event_to_app(self) -> None:
        """As uvicorn's, but for text that is not UTF-8: closed with 1007 and one short
        WARNING line (rate-limited: `invalid_utf8`), not a traceback at ERROR."""
        if self.curr_msg_data_type != "text" or self.close_sent:
            super().send_receive_event_to_app()
            return
        data = b"".join(self.frames)
        self.frames = []
        try:
            text = data.decode()
        except UnicodeDecodeError as exc:
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            invalid_utf8.warn(
                "%s sent a text frame that is not UTF-8 (at byte %d): closed with 1007",
                client,
                exc.start,
            )
            self.conn.send_close(INVALID_PAYLOAD, INVALID_UTF8_REASON)
            self.handle_parser_exception()  # tells the app, writes the close, closes
            return
        self.queue.put_nowait({"type": "websocket.receive", "text": text})
        if not self.read_paused:  # as uvicorn's: one message at a time
            self.read_paused = True
            self.transport.pause_reading()

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
