"""Cluster signals over PostgreSQL LISTEN/NOTIFY.

Each replica holds one connection that LISTENs (every channel any of its parts subscribed
to) and one that publishes (`pg_notify`), both plain asyncpg: a notification is a few bytes
on a connection that is already open, with no pool, ORM or transaction of ours around it.

The listening connection can be lost (PostgreSQL restarted, a network cut). It is then
opened again, with a growing pause between attempts, LISTENs to every channel once more,
and every subscriber is told (`on_resync`): what was published meanwhile was not delivered,
and each reads what it missed from the database. A ping every `ping_seconds` finds a
connection that died without closing (asyncpg notices a closed one at once).
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from application.ports.cluster_signals import MAX_PAYLOAD, ClusterSignals, Unsubscribe

log = logging.getLogger(__name__)

# What a connection the server dropped raises. InternalClientError too: a termination
# that arrives while the next statement starts leaves asyncpg's protocol mid-operation
# ("cannot switch to state ...; another operation is in progress").
DROPPED = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
RETRY_FIRST = 0.1  # seconds before the first attempt to listen again
RETRY_MOST = 5.0  # the pause between attempts doubles up to this


def asyncpg_dsn(url: str) -> str:
    """A SQLAlchemy URL (`postgresql+asyncpg://…`) as the DSN asyncpg itself takes."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass(slots=True)
class _Channel:
    messages: list[Callable[[str], None]] = field(default_factory=list)
    resyncs: list[Callable[[], None]] = field(default_factory=list)


class PostgresSignals(ClusterSignals):
    def __init__(self, url: str, *, ping_seconds: float = 5.0) -> None:
        self._dsn = asyncpg_dsn(url)
        self._ping_seconds = ping_seconds
        self._channels: dict[str, _Channel] = {}
        self._listener: Any = None  # asyncpg.Connection, once listening
        self._publisher: Any = None
        self._publish_lock = asyncio.Lock()
        self._listen_lock = asyncio.Lock()
        self._watch: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()  # the listening connection closed, or never opened
        self._closed = False

    async def publish(self, channel: str, payload: str) -> None:
        if len(payload.encode()) > MAX_PAYLOAD:
            raise ValueError(f"a signal carries at most {MAX_PAYLOAD} bytes")
        async with self._publish_lock:
            for attempt in (1, 2):  # a connection the server dropped is opened again once
                try:
                    if self._publisher is None or self._publisher.is_closed():
                        self._publisher = await asyncpg.connect(self._dsn)
                    await self._publisher.execute("SELECT pg_notify($1, $2)", channel, payload)
                    return
                except DROPPED:
                    await self._drop_publisher()
                    if attempt == 2:
                        raise

    async def subscribe(
        self,
        channel: str,
        on_message: Callable[[str], None],
        on_resync: Callable[[], None],
    ) -> Unsubscribe:
        entry = self._channels.get(channel)
        if entry is None:
            entry = self._channels[channel] = _Channel()
            async with self._listen_lock:
                await self._listen(channel)
        entry.messages.append(on_message)
        entry.resyncs.append(on_resync)

        async def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                entry.messages.remove(on_message)
                entry.resyncs.remove(on_resync)
            if not entry.messages and self._channels.get(channel) is entry:
                del self._channels[channel]
                async with self._listen_lock:
                    await self._unlisten(channel)

        return unsubscribe

    async def close(self) -> None:
        self._closed = True
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        for connection in (self._listener, self._publisher):
            if connection is not None:
                with contextlib.suppress(Exception):
                    await connection.close(timeout=2)
        self._listener = self._publisher = None
        self._channels.clear()

    # --- listening ---------------------------------------------------------------------

    async def _listen(self, channel: str) -> None:
        """LISTEN on `channel`, opening the connection first if there is none. A failure is
        left to the watch, which keeps trying and resyncs everyone once it listens."""
        self._start_watch()
        try:
            if self._listener is None:
                await self._connect_listener()  # listens to every channel, this one too
            else:
                await self._listener.add_listener(channel, self._deliver)
        except DROPPED as error:
            log.warning("cannot listen for cluster signals yet: %s", error)
            self._lost.set()

    async def _unlisten(self, channel: str) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.remove_listener(channel, self._deliver)

    async def _connect_listener(self) -> None:
        connection = await asyncpg.connect(self._dsn)
        try:
            for channel in list(self._channels):
                await connection.add_listener(channel, self._deliver)
        except BaseException:  # a failure, or close() cancelling the watch: never left open
            connection.terminate()
            raise
        connection.add_termination_listener(self._on_closed)
        self._listener = connection

    def _on_closed(self, connection: object) -> None:
        if connection is self._listener:  # not one we let go of ourselves
            self._lost.set()

    def _start_watch(self) -> None:
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._keep_listening())

    def _deliver(self, _connection: object, _pid: int, channel: str, payload: str) -> None:
        entry = self._channels.get(channel)
        for handler in list(entry.messages if entry else ()):
            try:
                handler(payload)
            except Exception:  # one subscriber's fault must not silence the others
                log.exception("a signal subscriber on %s failed", channel)

    async def _keep_listening(self) -> None:
        """Ping the listening connection (or hear that it closed); when it is gone, listen
        again and resync."""
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), self._ping_seconds)
            if not self._lost.is_set() and await self._alive():
                continue
            self._lost.clear()
            await self._relisten()

    async def _alive(self) -> bool:
        listener = self._listener
        if listener is None or listener.is_closed():
            return False
        try:
            await asyncio.wait_for(listener.fetchval("SELECT 1"), self._ping_seconds)
        except Exception:  # whatever ended it (a terminated backend, a timeout, a reset)
            return False
        return True

    async def _relisten(self) -> None:
        """Listen on a new connection in place of the one found dead (or none), then resync
        every subscriber. The connection is replaced under the listen lock: a subscriber
        that opened one while this waited for the lock (the first ping of a loaded machine
        can come while the first connection is being opened) keeps it, since it listens to
        every channel. Two listening connections would deliver every signal twice."""
        pause = RETRY_FIRST
        dead = self._listener
        while not self._closed:
            try:
                async with self._listen_lock:
                    current = self._listener
                    if current is None or current is dead or current.is_closed():
                        self._listener = None
                        if current is not None and not current.is_closed():
                            current.terminate()
                        await self._connect_listener()
            except Exception as error:  # the server is still away: try again, never give up
                log.warning("listening for cluster signals again failed: %s", error)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MOST)
                continue
            self._resync_all()
            return

    def _resync_all(self) -> None:
        for channel, entry in list(self._channels.items()):
            for resync in list(entry.resyncs):
                try:
                    resync()
                except Exception:
                    log.exception("a signal subscriber's resync on %s failed", channel)

    async def _drop_publisher(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            publisher.terminate()
