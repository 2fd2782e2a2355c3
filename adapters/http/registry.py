"""Every open connection, by id: opening within the cap, closing, reaping the idle ones."""

import asyncio
import logging
import math
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import Any

import anyio

from adapters.http.config import HttpConfig
from adapters.http.connection import HttpConnection
from adapters.http.errors import HttpError
from adapters.http.event_ids import EventId
from adapters.http.revival import Revival, RevivalSource
from adapters.protocol.connection import Dispatcher
from adapters.protocol.journal import CursorExpired
from application.errors import StorageError
from application.ports.update_journal import ConnectionRecord

log = logging.getLogger(__name__)

REMEMBERED_CLOSES = 10_000  # closed ids kept to say why they are gone
Clock = Callable[[], float]


class ConnectionRegistry:
    """`clock` (monotonic seconds) decides when connections expire; tests pass their own."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        config: HttpConfig,
        clock: Clock = time.monotonic,
        revival: RevivalSource | None = None,
    ) -> None:
        self._dispatcher = dispatcher
        self._revival = revival  # None: connections end with their process
        self._config = config
        self._clock = clock
        self._live: dict[str, HttpConnection] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        self._stopping: anyio.Event | None = None
        self._chores: set[asyncio.Task[None]] = set()  # record writes
        self._sockets = 0  # open WebSocket connections (websocket.py): they share the cap

    @property
    def stopping(self) -> anyio.Event:
        """Set (by sse-starlette, on every open stream) when the server begins to stop."""
        if self._stopping is None:
            self._stopping = anyio.Event()
        return self._stopping

    def open(self) -> HttpConnection:
        self._make_room()
        connection = self._new_connection(self._new_id())
        self._live[connection.id] = connection
        return connection

    def _new_connection(self, connection_id: str, first_event: int = 1) -> HttpConnection:
        return HttpConnection(
            connection_id,
            self._dispatcher,
            self._config,
            self._on_failure,
            self._clock,
            on_change=self._save_later,
            first_event=first_event,
        )

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

    async def find(self, connection_id: str | None, event_id: EventId | None) -> HttpConnection:
        """The live connection, or one this server's database holds (opened before a
        restart, or on another replica) taken up again: exactly where `event_id` (the
        client's Last-Event-ID) says its client is, or HTTP 409 if that cannot be done."""
        try:
            return self.get(connection_id)
        except HttpError:
            revival = await self._revival_for(connection_id)
            record = None if revival is None else await _stored(revival, connection_id or "")
            if revival is None or record is None:
                raise
        if event_id is None:
            raise _must_reload(
                f"connection {record.id[:80]} was open before this server restarted: reconnect "
                "its stream (GET /acp) with Last-Event-ID to resume it",
                "last_event_id_required",
            )
        return await self._take_up(revival, record, event_id)

    async def _revival_for(self, connection_id: str | None) -> Revival | None:
        if self._revival is None or not connection_id or connection_id in self._gone:
            return None
        return await self._revival()

    async def _take_up(
        self, revival: Revival, record: ConnectionRecord, event_id: EventId
    ) -> HttpConnection:
        cursors = event_id.cursors or ()
        if len(cursors) != len(record.sessions):
            raise _must_reload(
                f"Last-Event-ID names {len(cursors)} sessions; the connection had "
                f"{len(record.sessions)}",
                "cursor_mismatch",
            )
        for session_id, after in zip(record.sessions, cursors, strict=True):
            await _owed(revival, session_id, after)  # all kept? (nothing taken up if not)
        live = self._live.get(record.id)
        if live is not None:  # a concurrent request took it up meanwhile
            return live
        self._make_room()
        connection = self._new_connection(record.id, event_id.number + 1)
        connection.resume_from(record, cursors)
        self._live[connection.id] = connection
        try:
            for session_id in record.sessions:
                await revival.reattach(session_id, connection.protocol)
            for session_id, after in zip(record.sessions, cursors, strict=True):
                # Read again once attached: what arrived since is held, and sent once.
                await connection.catch_up(session_id, await _owed(revival, session_id, after))
        except BaseException:
            await self.close(connection, "could not be resumed", grace=0)
            raise
        log.info("connection %s resumed after event %d", record.id, event_id.number)
        self._save_later(connection)
        return connection

    async def close(
        self, connection: HttpConnection, why: str, grace: float = 2.0, *, keep: bool = False
    ) -> None:
        """`keep`: its record stays, so that its client may resume it after a restart."""
        self.forget(connection, why, keep=keep)
        await connection.close(grace)

    def forget(self, connection: HttpConnection, why: str, *, keep: bool = False) -> None:
        if self._live.get(connection.id) is connection:
            if not keep and connection.journaled:
                self._chore(self._forget_record(connection.id))
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
        """On shutdown: every record is kept, for the clients to resume after a restart."""
        await asyncio.gather(*(self.close(c, why, keep=True) for c in list(self._live.values())))
        await asyncio.gather(*self._closing, return_exceptions=True)
        await asyncio.gather(*self._chores, return_exceptions=True)

    def _save_later(self, connection: HttpConnection) -> None:
        """A session joined the connection: its record is written (not per event)."""
        if self._revival is not None:
            self._chore(self._save(connection))

    async def _save(self, connection: HttpConnection) -> None:
        revival = await self._revival() if self._revival is not None else None
        if revival is not None and self._live.get(connection.id) is connection:
            await revival.save(connection.record())

    async def _forget_record(self, connection_id: str) -> None:
        revival = await self._revival() if self._revival is not None else None
        if revival is not None:
            await revival.forget(connection_id)

    def _chore(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(_logged(work))
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

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


def _must_reload(message: str, reason: str, **details: Any) -> HttpError:
    """409: the stream cannot go on exactly where the client is; session/load starts over."""
    text = f"{message}; session/load each session (without a cursor) on a new connection"
    body = {"error": text, "reason": reason, "action": "session/load", **details}
    return HttpError(409, text, body=body)


async def _owed(revival: Revival, session_id: str, after: int) -> list[dict[str, Any]]:
    try:
        return await revival.catch_up(session_id, after)
    except CursorExpired as exc:
        details = {k: v for k, v in exc.data().items() if k != "reason"}
        raise _must_reload(str(exc), exc.reason, **details) from None
    except StorageError as exc:
        log.warning("session %s: missed updates not readable: %s", session_id, exc)
        raise HttpError(
            503,
            "the missed updates could not be read (storage unavailable); retry later",
            headers={"Retry-After": "5"},
        ) from None


async def _logged(work: Coroutine[Any, Any, None]) -> None:
    try:
        await work
    except Exception as exc:  # a record not written: that client cannot resume after a restart
        log.warning("connection record not written: %s", exc)


async def _stored(revival: Revival, connection_id: str) -> ConnectionRecord | None:
    try:
        return await revival.stored(connection_id)
    except Exception as exc:  # the database is out: the client may retry, not start over
        log.warning("connection %s: its record could not be read: %s", connection_id[:80], exc)
        raise HttpError(
            503,
            "the connection could not be looked up (storage unavailable); retry later",
            headers={"Retry-After": "5"},
        ) from None
