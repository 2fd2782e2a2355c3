"""Slow clients: a request's headers must arrive within a deadline.

uvicorn (0.54) closes idle keep-alive connections (`timeout_keep_alive`) and bounds the
header size (h11's 16 KiB), but has no deadline for the headers themselves: a client that
sends a header line now and then holds its connection (a file descriptor, before any
authentication) forever. Its h11 protocol is extended here with one timer per connection,
armed when the connection opens and after each response; when it fires, the connection is
closed unless a request's headers are in and its response is under way. The body's own
deadline is `intake.read_body`'s.

A connection closed with the client's bytes unread (a 408 for a body still coming, a 400, a
413) is reset by the kernel, and a reset can reach the client before it has read the answer:
it sees `ConnectionResetError`, not the 408. So closing lingers (`LingeringClose`): the
answer is written, the server's side shut down (the client reads the answer, then the end),
and what the client still sends is read and discarded until it closes its side, for at most
LINGER_SECONDS and LINGER_BYTES; only then is the socket closed. A server shutting down and
an idle keep-alive connection expiring close at once (nothing is unread there).
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


def timeout_response(seconds: float) -> bytes:
    """408 in the transport's error shape, written raw: no request was parsed to answer."""
    body = json.dumps({"error": f"the request headers did not arrive within {seconds:g} s"})
    return (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
        f"{body}"
    ).encode()


LINGER_SECONDS = 2.0
LINGER_BYTES = 2**20


class LingeringClose(asyncio.Transport):
    """The transport uvicorn's h11 protocol and its request cycles see: the real one, but
    for a `close()` that lingers (see the module's docstring) unless `at_once` says not to."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.real = transport
        self._loop = loop
        self.lingering = False
        self._at_once = False
        self._discarded = 0
        self._timer: asyncio.TimerHandle | None = None

    def close(self) -> None:
        if self.lingering or self.real.is_closing():
            return
        if self._at_once or not self.real.can_write_eof():
            self.real.close()
            return
        try:
            self.real.write_eof()  # after what is buffered: the client reads the answer, then EOF
        except OSError as exc:  # the client reset the connection already: nothing to linger for
            log.debug("closing a connection its client already reset: %s", exc)
            self.real.close()
            return
        self.lingering = True
        self.real.resume_reading()  # uvicorn may have paused it: the kernel's buffer must drain
        self._timer = self._loop.call_later(LINGER_SECONDS, self.real.close)

    @contextlib.contextmanager
    def at_once(self) -> Iterator[None]:
        self._at_once = True
        try:
            yield
        finally:
            self._at_once = False

    def discard(self, data: bytes) -> None:
        """What the client sends while the close lingers; past LINGER_BYTES, closed."""
        self._discarded += len(data)
        if self._discarded > LINGER_BYTES:
            self.real.close()

    def lost(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # The rest as the real transport; nothing is written once the close lingers.
    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.lingering:
            self.real.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        if not self.lingering:
            self.real.writelines(list_of_data)

    def is_closing(self) -> bool:
        return self.lingering or self.real.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.real.get_extra_info(name, default)

    def pause_reading(self) -> None:
        if not self.lingering:
            self.real.pause_reading()

    def resume_reading(self) -> None:
        self.real.resume_reading()

    def is_reading(self) -> bool:
        return self.real.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.real.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.real.get_protocol()

    def abort(self) -> None:
        self.real.abort()

    def get_write_buffer_size(self) -> int:
        return self.real.get_write_buffer_size()

    def can_write_eof(self) -> bool:
        return self.real.can_write_eof()

    def write_eof(self) -> None:
        self.real.write_eof()


def with_header_deadline(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing connections whose headers are not in after `seconds`
    (with a 408 when part of a request came)."""
    expired = timeout_response(seconds)

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _closing: LingeringClose

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._closing = LingeringClose(transport, self.loop)
            super().connection_made(self._closing)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._closing.lingering:
                self._closing.discard(data)
                return
            super().data_received(data)

        def shutdown(self) -> None:
            with self._closing.at_once():
                if self._closing.lingering:
                    self._closing.real.close()
                    return
                super().shutdown()

        def timeout_keep_alive_handler(self) -> None:
            with self._closing.at_once():
                super().timeout_keep_alive_handler()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # for the next request's headers

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()  # the headers are in: the WebSocket protocol takes over
            self.transport = self._closing.real  # ... with the socket itself
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._closing.lost()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or self._serving():
                return
            # A 408 only for part of a request: on an idle keep-alive connection the client
            # would read it as the answer to the request it is about to send.
            if self.conn.our_state is h11.IDLE and self.conn.trailing_data[0]:
                self.transport.write(expired)
            self.transport.close()

        def _serving(self) -> bool:
            """A request's headers are in (h11 parsed them, even if the app has not started
            yet) and its response is not done: the app and its body deadline are in charge."""
            return self.conn.their_state is not h11.IDLE and self.conn.our_state in (
                h11.SEND_RESPONSE,
                h11.SEND_BODY,
            )

    return HeaderDeadline


def uvicorn_options(header_timeout_seconds: float) -> dict[str, Any]:
    """The uvicorn.Config options that bound slow clients (the server and the tests use
    them both)."""
    return {
        "http": with_header_deadline(header_timeout_seconds),
        "timeout_keep_alive": 5,  # an idle keep-alive connection, between requests
        "ws": "none",  # websocket_protocol.websocket_options() enables it
    }
