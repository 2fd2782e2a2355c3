"""Newline-delimited JSON-RPC over stdin/stdout.

Reading and writing happen on threads: that works for pipes, files and terminals alike,
never blocks the event loop on a slow reader, and keeps message order. The writer takes
everything that waits at once and writes it with one call; while the client is behind,
waiting updates are merged (adapters.acp_v1.coalesce), so it gets fewer, larger chunks
and the agent holds no growing queue.
"""

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from adapters.acp_v1.coalesce import merged
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import encode

log = logging.getLogger(__name__)


_SKIP_PIECE = 2**20
# Messages that could not be merged and still wait for a client that does not read: past
# this many, senders wait for the writer (the model stream then waits on its socket).
MAX_WAITING = 4096
# After stdin's EOF, how long requests still running get to answer (prompts are cancelled
# and answer at once; a first session/new may be migrating the database), and after SIGTERM
# or SIGINT (a supervisor waits a few seconds before it kills). Past it: -32603.
EOF_ANSWER_BOUND = 30.0
STOP_ANSWER_BOUND = 2.0


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit, already skipped: only its size is kept."""

    size: int


class StdioTransport:
    def __init__(self, source: BinaryIO, sink: BinaryIO, *, max_line: int) -> None:
        self._max_line = max_line
        self._source = source
        self._sink = sink
        self._waiting: deque[dict[str, Any]] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._closed = False
        self._writer = threading.Thread(target=self._write_loop, name="acp-stdout", daemon=True)
        self._writer.start()

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
        if self._closed:
            return
        with self._ready:
            if self._waiting and (both := merged(self._waiting[-1], message)) is not None:
                self._waiting[-1] = both
            else:
                self._waiting.append(message)
                self._ready.notify()
            full = len(self._waiting) > MAX_WAITING
        while full and not self._closed and self._writer.is_alive():
            await asyncio.sleep(0.01)
            full = len(self._waiting) > MAX_WAITING

    async def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        await asyncio.to_thread(self._writer.join, 5)

    def _write_loop(self) -> None:
        while batch := self._take():
            try:
                self._sink.write(b"".join(_encoded(message) for message in batch))
                self._sink.flush()
            except (OSError, ValueError):
                log.warning("stdout is gone; dropping outgoing messages")
                with self._ready:
                    self._closed = True
                    self._waiting.clear()
                return

    def _take(self) -> list[dict[str, Any]]:
        """Everything waiting, once there is something (empty once closed and drained)."""
        with self._ready:
            while not self._waiting and not self._closed:
                self._ready.wait()
            batch = list(self._waiting)
            self._waiting.clear()
            return batch


def _encoded(message: dict[str, Any]) -> bytes:
    """The message's line; a message that cannot be JSON (a bug where it was made) is logged
    and left out. It is encoded on the writer's thread, where raising would stop all output
    and lose the messages sent with it."""
    try:
        return encode(message)
    except Exception:
        log.exception("an outgoing message could not be encoded; it was not sent")
        return b""


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
    eof = reading.done()
    log.info("stdin closed; shutting down" if eof else "stopping on request")
    # Every request read is answered: the client may still read after closing our stdin.
    await connection.finish(EOF_ANSWER_BOUND if eof else STOP_ANSWER_BOUND)
    await transport.close()


async def _pump(transport: StdioTransport, connection: Connection, max_line: int) -> None:
    async for line in transport.lines():
        if isinstance(line, Oversized):
            await connection.refuse_oversized(line.size, max_line)
        else:
            await connection.receive(line)
