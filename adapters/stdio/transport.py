"""Newline-delimited JSON-RPC over stdin/stdout.

Reading and writing happen on threads: that works for pipes, files and terminals alike,
never blocks the event loop on a slow reader, and keeps message order.
"""

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import encode

log = logging.getLogger(__name__)


class StdioTransport:
    def __init__(self, source: BinaryIO, sink: BinaryIO) -> None:
        self._source = source
        self._sink = sink
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="acp-stdout", daemon=True)
        self._writer.start()
        self._closed = False

    async def lines(self) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[bytes | None] = asyncio.Queue()

        def read_loop() -> None:
            try:
                for line in iter(self._source.readline, b""):
                    loop.call_soon_threadsafe(inbox.put_nowait, line)
            except (OSError, ValueError) as exc:
                log.warning("stdin closed with an error: %s", exc)
            finally:
                loop.call_soon_threadsafe(inbox.put_nowait, None)

        threading.Thread(target=read_loop, name="acp-stdin", daemon=True).start()
        while (line := await inbox.get()) is not None:
            if line.strip():
                yield line

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


async def serve(dispatcher: Dispatcher, source: BinaryIO, sink: BinaryIO) -> None:
    """Serve one client until stdin closes, then let running turns wind down and return."""
    transport = StdioTransport(source, sink)
    connection = Connection(transport.send, dispatcher)
    async for line in transport.lines():
        await connection.receive(line)
    log.info("stdin closed; shutting down")
    await connection.close()
    await transport.close()
