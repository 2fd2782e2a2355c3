"""A TCP proxy on loopback that a test can cut and restore, standing for a network (or a
database server) going away and coming back while the real server behind it stays up.
It runs its own event loop on a thread, so sync and async tests can both drive it."""

import asyncio
import socket
import threading
from typing import Any


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])

    def __enter__(self) -> "TcpProxy":
        self._thread.start()
        self.restore()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cut()
        self._call(self._finish())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def cut(self) -> None:
        """Refuse new connections and drop the open ones, as a vanished server does."""
        self._call(self._cut())

    def restore(self) -> None:
        """Accept connections again, on the same port."""
        self._call(self._listen())

    def _call(self, work: Any) -> None:
        asyncio.run_coroutine_threadsafe(work, self._loop).result(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()  # a reset, not a polite goodbye
        self._open.clear()

    async def _finish(self) -> None:
        """Every pipe ended and every transport closed before the loop stops: one left to
        the garbage collector is a ResourceWarning in whichever test runs then (a loaded
        run saw one, from a connection accepted just as the proxy was cut)."""
        pipes = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for pipe in pipes:
            pipe.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        await asyncio.sleep(0)  # the aborted transports close their sockets now

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:  # refused: the client is reset, as by a vanished server
            writer.transport.abort()
            return
        except asyncio.CancelledError:  # the proxy finishing: the client is reset too
            writer.transport.abort()
            raise
        if self._server is None:  # cut while this one was connecting: nothing passes
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self._open |= {writer, up_writer}
        await asyncio.gather(
            _copy(reader, up_writer), _copy(up_reader, writer), return_exceptions=True
        )
        self._open -= {writer, up_writer}


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    finally:
        sink.transport.abort()
