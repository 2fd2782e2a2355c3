"""Slow clients: a request's headers must arrive within a deadline.

uvicorn (0.54) closes idle keep-alive connections (`timeout_keep_alive`) and bounds the
header size (h11's 16 KiB), but has no deadline for the headers themselves: a client that
sends a header line now and then holds its connection (a file descriptor, before any
authentication) forever. Its h11 protocol is extended here with one timer per connection,
armed when the connection opens and after each response; when it fires, the connection is
closed unless a request's headers are in and its response is under way. The body's own
deadline is `intake.read_body`'s.
"""

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


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


def with_header_deadline(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing connections whose headers are not in after `seconds`
    (with a 408 when part of a request came)."""
    expired = timeout_response(seconds)

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # for the next request's headers

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()  # the headers are in: the WebSocket protocol takes over
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
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
