"""Every open connection, by id: opening within the cap, closing, reaping the idle ones."""

import asyncio
import logging
import math
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

import anyio

from adapters.http.config import HttpConfig
from adapters.http.connection import HttpConnection
from adapters.http.errors import HttpError
from adapters.protocol.connection import Dispatcher

log = logging.getLogger(__name__)

REMEMBERED_CLOSES = 10_000  # closed ids kept to say why they are gone
Clock = Callable[[], float]


class ConnectionRegistry:
    """`clock` (monotonic seconds) decides when connections expire; tests pass their own."""

    def __init__(
        self, dispatcher: Dispatcher, config: HttpConfig, clock: Clock = time.monotonic
    ) -> None:
        self._dispatcher = dispatcher
        self._config = config
        self._clock = clock
        self._live: dict[str, HttpConnection] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        self._stopping: anyio.Event | None = None
        self._sockets = 0  # open WebSocket connections (websocket.py): they share the cap

    @property
    def stopping(self) -> anyio.Event:
        """Set (by sse-starlette, on every open stream) when the server begins to stop."""
        if self._stopping is None:
            self._stopping = anyio.Event()
        return self._stopping

    def open(self) -> HttpConnection:
        self._make_room()
        connection = HttpConnection(
            self._new_id(), self._dispatcher, self._config, self._on_failure, self._clock
        )
        self._live[connection.id] = connection
        return connection

    def open_socket(self) -> str:
        """Count a WebSocket connection against the cap; returns its id. Release it with
        `close_socket` when the socket goes."""
        self._make_room()
        self._sockets += 1
        return self._new_id()

    def close_socket(self) -> None:
        self._sockets -= 1

    def _make_room(self) -> None:
        """Raise 503 if the cap is reached, after closing the expired connections."""
        if len(self._live) + self._sockets >= self._config.max_connections:
            # Full only counts live connections: expired ones give their slot up now.
            for connection in self._expired():
                self._close_later(connection, self._why_expired(connection))
        if len(self._live) + self._sockets >= self._config.max_connections:
            raise HttpError(
                503,
                f"too many open connections ({self._config.max_connections}); retry later",
                headers={"Retry-After": str(self._seconds_to_a_free_slot())},
            )

    def _new_id(self) -> str:
        """`<replica id>.<uuid4>`: the replica that holds the connection is readable from its
        id, so a balancer can send every later request there (see docs/deploy.md)."""
        random_part = str(uuid.uuid4())
        prefix = self._config.replica_id
        return f"{prefix}.{random_part}" if prefix else random_part

    def get(self, connection_id: str | None) -> HttpConnection:
        if not connection_id:
            raise HttpError(400, "missing Acp-Connection-Id header: POST initialize first")
        connection = self._live.get(connection_id)
        if connection is not None:
            return connection
        shown = connection_id[:80]  # the client's own text, echoed: kept short (ids fit)
        why = self._gone.get(connection_id)
        if why is not None:
            raise HttpError(400, f"connection {shown} is closed: {why}")
        raise HttpError(400, f"unknown connection id {shown}")

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
        """Close connections with no stream and no request for the idle timeout, or for the
        (shorter) unused timeout if they were never used after `initialize`."""
        expired = self._expired()
        await asyncio.gather(*(self.close(c, self._why_expired(c)) for c in expired))
        return len(expired)

    def _timeout(self, connection: HttpConnection) -> float:
        if connection.used:
            return self._config.idle_timeout_seconds
        return self._config.unused_timeout_seconds

    def _expired(self) -> list[HttpConnection]:
        now = self._clock()
        return [
            c
            for c in self._live.values()
            if c.streams == 0 and now - c.last_seen > self._timeout(c)
        ]

    def _why_expired(self, connection: HttpConnection) -> str:
        kind = "idle" if connection.used else "unused after initialize"
        return f"{kind} for more than {self._timeout(connection):g} s"

    def _seconds_to_a_free_slot(self) -> int:
        """Retry-After: when the first connection without a stream would expire, within
        1-60 s (5 s if all have one: only a DELETE frees a slot then)."""
        now = self._clock()
        waits = [
            c.last_seen + self._timeout(c) - now for c in self._live.values() if c.streams == 0
        ]
        return max(1, min(60, math.ceil(min(waits)))) if waits else 5

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
        self._close_later(connection, connection.outbox.failure or "failed")

    def _close_later(self, connection: HttpConnection, why: str) -> None:
        """Forget the connection now (its slot is free), close it in a task of its own."""
        self.forget(connection, why)
        task = asyncio.get_running_loop().create_task(connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
