"""One client's ACP connection over a WebSocket: the protocol core's `Connection`, whose
outgoing messages go through a bounded queue to a writer task.

A WebSocket send waits while the peer does not read. Without the queue, one slow reader
would stall the turn that streams to it; with it, the turn goes on until the queue is full
(IAC_CODE_HTTP_BUFFER_EVENTS / _BYTES), then waits for room at most the sender patience
(IAC_CODE_HTTP_SENDER_PATIENCE_SECONDS). A peer that reads nothing for that long is closed
with FELL_BEHIND: it learns why, rather than missing messages silently.
"""

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from adapters.http.config import HttpConfig
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import INTERNAL_ERROR, RpcError, encode, error_message

log = logging.getLogger(__name__)

FELL_BEHIND = 1008  # policy violation: the peer does not read what it is sent

Write = Callable[[str], Awaitable[None]]
Fail = Callable[[int, str], None]


class SocketConnection:
    """`write` sends one text frame; `fail(code, reason)` closes the socket at once."""

    def __init__(
        self,
        connection_id: str,
        dispatcher: Dispatcher,
        config: HttpConfig,
        write: Write,
        fail: Fail,
    ) -> None:
        self.id = connection_id
        self.protocol = Connection(self._send, dispatcher)
        self._write = write
        self._fail = fail
        self._max_events = config.buffer_max_events
        self._max_bytes = config.buffer_max_bytes
        self._max_event_bytes = config.max_event_bytes
        self._patience = config.sender_patience_seconds
        self._queue: deque[tuple[str, int]] = deque()
        self._queued_bytes = 0
        self._pending = asyncio.Event()  # the queue has something to write
        self._room = asyncio.Event()  # the writer took a message off the queue
        self._closed = False
        self._failed = False  # fell behind: what is sent now is dropped, the socket closes
        self._writer = asyncio.get_running_loop().create_task(self._write_forever())

    @property
    def queued(self) -> int:
        """Messages produced and not yet written to the socket."""
        return len(self._queue)

    async def receive(self, text: str) -> None:
        await self.protocol.receive(text)

    async def close(self, grace: float = 2.0) -> None:
        """Cancel the running calls (they get `grace` seconds), then stop the writer: the
        socket is gone, so what is still queued is dropped."""
        if self._closed:
            return
        self._closed = True
        self._room.set()  # senders waiting for room give up
        await self.protocol.close(grace=grace)
        self._writer.cancel()
        await asyncio.gather(self._writer, return_exceptions=True)

    async def _send(self, message: dict[str, Any]) -> None:
        if self._closed or self._failed:
            return
        frame = encode(message)
        if len(frame) > self._max_event_bytes:
            frame = self._too_large(message, len(frame))
            if not frame:
                return
        text = frame.decode().rstrip("\n")
        size = len(frame)
        if not await self._wait_for_room(size):
            return
        self._queue.append((text, size))
        self._queued_bytes += size
        self._pending.set()

    async def _wait_for_room(self, size: int) -> bool:
        deadline = asyncio.get_running_loop().time() + self._patience
        while not self._has_room(size):
            self._room.clear()
            try:
                async with asyncio.timeout_at(deadline):
                    await self._room.wait()
            except TimeoutError:
                self._fall_behind()
                return False
            if self._closed or self._failed:
                return False
        return True

    def _has_room(self, size: int) -> bool:
        if not self._queue:
            return True  # one message always fits, whatever its size (within max_event_bytes)
        return len(self._queue) < self._max_events and self._queued_bytes + size <= self._max_bytes

    def _fall_behind(self) -> None:
        reason = (
            f"too far behind: {len(self._queue)} messages unread for {self._patience:g} s "
            "(IAC_CODE_HTTP_SENDER_PATIENCE_SECONDS)"
        )
        log.warning("websocket connection %s closed: %s", self.id, reason)
        self._failed = True
        self._room.set()
        self._fail(FELL_BEHIND, reason[:120])  # a close reason is at most 123 bytes

    def _too_large(self, message: dict[str, Any], size: int) -> bytes:
        """What goes instead of a message over the event limit: an agent request fails at
        once (its caller is told), a response becomes an error response, a notification is
        dropped (said in the log)."""
        text = f"the message is {size} bytes, over the limit of {self._max_event_bytes} bytes"
        data = {
            "size": size,
            "limit": self._max_event_bytes,
            "setting": "IAC_CODE_HTTP_MAX_EVENT_BYTES",
        }
        if "method" in message and "id" in message:
            raise RpcError(INTERNAL_ERROR, text, data)
        if "method" not in message:
            return encode(error_message(message.get("id"), RpcError(INTERNAL_ERROR, text, data)))
        log.warning("dropped a %s notification to %s: %s", message["method"], self.id, text)
        return b""

    async def _write_forever(self) -> None:
        try:
            while True:
                while not self._queue:
                    self._pending.clear()
                    await self._pending.wait()
                text, size = self._queue[0]
                await self._write(text)
                self._queue.popleft()
                self._queued_bytes -= size
                self._room.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the socket is gone: its reader learns it and closes us
            log.info("websocket connection %s stopped writing: %r", self.id, exc)
