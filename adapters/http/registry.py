"""Every open connection, by id: opening within the cap, closing, reaping the idle ones."""

import asyncio
import logging
import time
import uuid
from collections import OrderedDict

import anyio

from adapters.http.config import HttpConfig
from adapters.http.connection import HttpConnection
from adapters.http.errors import HttpError
from adapters.protocol.connection import Dispatcher

log = logging.getLogger(__name__)

REMEMBERED_CLOSES = 10_000  # closed ids kept to say why they are gone


class ConnectionRegistry:
    def __init__(self, dispatcher: Dispatcher, config: HttpConfig) -> None:
        self._dispatcher = dispatcher
        self._config = config
        self._live: dict[str, HttpConnection] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        self._stopping: anyio.Event | None = None

    @property
    def stopping(self) -> anyio.Event:
        """Set (by sse-starlette, on every open stream) when the server begins to stop."""
        if self._stopping is None:
            self._stopping = anyio.Event()
        return self._stopping

    def open(self) -> HttpConnection:
        if len(self._live) >= self._config.max_connections:
            raise HttpError(
                503,
                f"too many open connections ({self._config.max_connections}); retry later",
                headers={"Retry-After": "5"},
            )
        connection = HttpConnection(
            str(uuid.uuid4()), self._dispatcher, self._config, self._on_failure
        )
        self._live[connection.id] = connection
        return connection

    def get(self, connection_id: str | None) -> HttpConnection:
        if not connection_id:
            raise HttpError(400, "missing Acp-Connection-Id header: POST initialize first")
        connection = self._live.get(connection_id)
        if connection is not None:
            return connection
        why = self._gone.get(connection_id)
        if why is not None:
            raise HttpError(400, f"connection {connection_id} is closed: {why}")
        raise HttpError(400, f"unknown connection id {connection_id}")

    async def close(self, connection: HttpConnection, why: str, grace: float = 2.0) -> None:
        self.forget(connection, why)
        await connection.close(grace)

    def forget(self, connection: HttpConnection, why: str) -> None:
        if self._live.get(connection.id) is connection:
            del self._live[connection.id]
            self._gone[connection.id] = why
            while len(self._gone) > REMEMBERED_CLOSES:
                self._gone.popitem(last=False)
            log.info("connection %s closed: %s", connection.id, self._gone[connection.id])

    async def reap(self) -> int:
        """Close connections with no stream and no request for the idle timeout."""
        deadline = time.monotonic() - self._config.idle_timeout_seconds
        idle = [c for c in self._live.values() if c.streams == 0 and c.last_seen < deadline]
        why = f"idle for more than {self._config.idle_timeout_seconds:g} s"
        await asyncio.gather(*(self.close(c, why) for c in idle))
        return len(idle)

    async def reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self._config.reap_interval_seconds)
            try:
                await self.reap()
            except Exception:  # the reaper must outlive any one bad close
                log.exception("reaping idle connections failed")

    async def close_all_on_shutdown(self) -> None:
        # Streams still open when the server stops end cleanly once their connection is
        # closed: running prompts are cancelled and their last messages delivered first.
        await self.stopping.wait()
        await self.close_all("the server is shutting down")

    async def close_all(self, why: str) -> None:
        await asyncio.gather(*(self.close(c, why) for c in list(self._live.values())))
        await asyncio.gather(*self._closing, return_exceptions=True)

    def _on_failure(self, connection: HttpConnection) -> None:
        # Called from inside the connection's send: close it from a task of its own. A stream
        # open now still carries the error event; later requests get a 400 saying why.
        log.warning("connection %s failed: %s", connection.id, connection.outbox.failure)
        self.forget(connection, connection.outbox.failure or "failed")
        task = asyncio.get_running_loop().create_task(connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
