"""Newline-delimited JSON-RPC over stdin/stdout.

Reading and writing happen on threads: that works for pipes, files and terminals alike,
never blocks the event loop on a slow reader, and keeps message order.
"""

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import encode

log = logging.getLogger(__name__)


_SKIP_PIECE = 2**20


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit, already skipped: only its size is kept."""

    size: int


class StdioTransport:
    def __init__(self, source: BinaryIO, sink: BinaryIO, *, max_line: int) -> None:
        self._max_line = max_line
        self._source = source
        self._sink = sink
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="acp-stdout", daemon=True)
        self._writer.start()
        self._closed = False

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[bytes | Oversized | None] = asyncio.Queue()

        def read_loop() -> None:
            try:
                while line := self._read_line():
                    loop.call_soon_threadsafe(inbox.put_nowait, line)
            except (OSError, ValueError) as exc:
                log.warning("stdin closed with an error: %s", exc)
            finally:
                loop.call_soon_threadsafe(inbox.put_nowait, None)

        threading.Thread(target=read_loop, name="acp-stdin", daemon=True).start()
        while (line := await inbox.get()) is not None:
            if isinstance(line, Oversized) or line.strip():
                yield line

    def _read_line(self) -> bytes | Oversized:
        """The next line (b"" at the end), or Oversized for one longer than the limit, which
        is skipped in pieces: an oversized line never sits in memory whole."""
        line = self._source.readline(self._max_line + 1)
        if len(line) <= self._max_line or line.endswith(b"\n"):
            return line
        size = len(line)
        while (piece := self._source.readline(_SKIP_PIECE)) and not piece.endswith(b"\n"):
            size += len(piece)
        return Oversized(size=size + len(piece))

    async def send(self, message: dict[str, Any]) -> None:
        if not self._closed:
            self._outbox.put(encode(message))

    async def close(self) -> None:
        self._closed = True
        self._outbox.put(None)
        await asyncio.to_thread(self._writer.join, 5)

    def _write_loop(self) -> None:
        while (data := self._outbox.get()) is not None:
            try:
                self._sink.write(data)
                self._sink.flush()
            except (OSError, ValueError):
                log.warning("stdout is gone; dropping outgoing messages")
                return


async def serve(
    dispatcher: Dispatcher,
    source: BinaryIO,
    sink: BinaryIO,
    *,
    max_line: int,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve one client until stdin closes or `stop` is set, then let running turns wind
    down (their tools stop what they started) and return."""
    transport = StdioTransport(source, sink, max_line=max_line)
    connection = Connection(transport.send, dispatcher)
    reading = asyncio.ensure_future(_pump(transport, connection, max_line))
    waiting: set[asyncio.Future[Any]] = {reading}
    if stop is not None:
        waiting.add(asyncio.ensure_future(stop.wait()))
    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    log.info("stdin closed; shutting down" if reading.done() else "stopping on request")
    await connection.close()
    await transport.close()


async def _pump(transport: StdioTransport, connection: Connection, max_line: int) -> None:
    async for line in transport.lines():
        if isinstance(line, Oversized):
            await connection.refuse_oversized(line.size, max_line)
        else:
            await connection.receive(line)
