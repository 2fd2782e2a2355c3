"""One client's ACP connection over HTTP: the protocol core's `Connection`, and the outbox
its messages go to."""

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from adapters.acp_v1.shaping import message_for_client
from adapters.http.config import HttpConfig
from adapters.http.event_ids import cursor_tag
from adapters.http.outbox import EventTooLarge, Outbox
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.journal import seq_of
from adapters.protocol.jsonrpc import INTERNAL_ERROR, RequestId, RpcError
from application.ports.update_journal import ConnectionRecord

SKIP = ("", 0)  # _numbered: not to be sent


class HttpConnection:
    def __init__(
        self,
        connection_id: str,
        dispatcher: Dispatcher,
        config: HttpConfig,
        on_failure: Callable[["HttpConnection"], None],
        clock: Callable[[], float],
        *,
        on_change: Callable[["HttpConnection"], None] = lambda _: None,
        first_event: int = 1,
    ) -> None:
        self.id = connection_id
        # The sessions whose numbered updates went out here, in order of their first one,
        # and the newest number of each: the tail of every event id (event_ids.py).
        self.journaled: list[str] = []
        self.cursors: dict[str, int] = {}
        self._on_change = on_change  # a session joined: the connection's record is saved
        self._holding: dict[str, list[dict[str, Any]]] = {}  # live updates during a catch-up
        self.outbox = Outbox(
            max_events=config.buffer_max_events,
            max_bytes=config.buffer_max_bytes,
            max_event_bytes=config.max_event_bytes,
            on_failure=lambda _reason: on_failure(self),
            tag=self._cursor_tag,
            first_id=first_event,
        )
        self._patience = config.sender_patience_seconds
        self.protocol = Connection(self._send, dispatcher, on_numbered_again=self._numbered_again)
        self.sessions: set[str] = set()  # ids seen in our messages: their GETs are accepted
        self.closed = asyncio.Event()
        self.streams = 0
        # Used: a stream was opened or a request sent after `initialize`. Connections never
        # used are reaped much sooner than idle ones (IAC_CODE_HTTP_UNUSED_TIMEOUT_SECONDS).
        self.used = False
        self._clock = clock
        self.last_seen = clock()
        self._initializing: tuple[RequestId, asyncio.Future[dict[str, Any]]] | None = None

    def touch(self, *, use: bool = True) -> None:
        self.used = self.used or use
        self.last_seen = self._clock()

    async def initialize(self, raw: bytes, request_id: RequestId) -> dict[str, Any]:
        """Serve the `initialize` request that opened this connection; return its response
        (it goes in the POST's body, not on the stream)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._initializing = (request_id, future)
        try:
            await self.protocol.receive(raw)
            return await future
        finally:
            self._initializing = None

    async def receive(self, raw: bytes) -> None:
        self.touch()
        await self.protocol.receive(raw)

    def follow(self, last_event_id: int | None, first: bytes) -> AsyncIterator[bytes]:
        """The connection's stream: `first`, then its events (see Outbox.follow)."""
        self.touch()
        return self._counted(first, self.outbox.follow(last_event_id))

    async def session_stream(self, first: bytes) -> AsyncIterator[bytes]:
        """A stream that carries only `first` and keepalives, until the connection ends:
        every event goes on the connection's stream, so none is split off or sent twice."""
        self.touch()
        self.streams += 1
        try:
            yield first
            await self.closed.wait()
        finally:
            self.streams -= 1
            self.touch()

    async def close(self, grace: float = 2.0) -> None:
        """Cancel the running prompts and close the sessions (the core does both; calls get
        `grace` seconds to wind down), then end the streams once they have sent what is
        buffered."""
        if self.closed.is_set():
            return
        self.closed.set()
        await self.protocol.close(grace=grace)
        self.outbox.close()

    def record(self) -> ConnectionRecord:
        return ConnectionRecord(
            id=self.id,
            client_capabilities=self.protocol.client_capabilities,
            sessions=tuple(self.journaled),
            next_event=self.outbox.last_id + 1,
        )

    def resume_from(self, record: ConnectionRecord, cursors: tuple[int, ...]) -> None:
        """Take up a stored connection: its client's capabilities and sessions, each at the
        cursor the client's Last-Event-ID named. Their live updates are held (catch_up)."""
        self.protocol.client_capabilities = record.client_capabilities
        self.journaled = list(record.sessions)
        self.cursors = dict(zip(record.sessions, cursors, strict=True))
        self.sessions.update(record.sessions)
        self._holding = {session_id: [] for session_id in record.sessions}

    async def catch_up(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Send `messages` (what the session's stream owes the client), then the live
        updates held meanwhile, each once: a held one the catch-up included is dropped."""
        held = self._holding.pop(session_id, [])  # these were live: shown to it already
        capabilities = self.protocol.client_capabilities
        owed = [m for m in (message_for_client(m, capabilities) for m in messages) if m is not None]
        for message in owed + held:
            await self._send(message)

    def _cursor_tag(self) -> bytes:
        return cursor_tag([self.cursors[s] for s in self.journaled]) if self.journaled else b""

    def _numbered(self, message: dict[str, Any]) -> tuple[str, int] | None:
        """A numbered session/update's (session, number); None: not one; SKIP: held or
        dropped instead of sent."""
        params = message.get("params")
        if message.get("method") != "session/update" or not isinstance(params, dict):
            return None
        seq = seq_of(params)
        session_id = params.get("sessionId")
        if seq is None or not isinstance(session_id, str):
            return None
        held = self._holding.get(session_id)
        if held is not None:
            held.append(message)
            return SKIP
        cursor = self.cursors.get(session_id)
        if cursor is not None and seq <= cursor:
            return SKIP  # already sent (a catch-up and a live copy of one update)
        return session_id, seq

    def _numbered_again(self, session_id: str, seq: int) -> None:
        """The session's updates are numbered again from `seq`: those this client was sent
        from there on were never written, so the next `seq` is not a copy of one it has."""
        cursor = self.cursors.get(session_id)
        if cursor is not None and cursor >= seq:
            self.cursors[session_id] = seq - 1

    def _advance(self, session_id: str, seq: int) -> None:
        """Just before the update is numbered in the outbox: its id's tail includes it."""
        joined = session_id not in self.cursors
        self.cursors[session_id] = max(seq, self.cursors.get(session_id, 0))
        if joined:
            self.journaled.append(session_id)
            self._on_change(self)

    async def _send(self, message: dict[str, Any]) -> None:
        pending = self._initializing
        if pending is not None and "method" not in message and message.get("id") == pending[0]:
            if not pending[1].done():
                pending[1].set_result(message)
            return
        self._note_session(message)
        numbered = self._numbered(message)
        if numbered is SKIP:
            return
        await self.outbox.room(self._patience)
        if numbered is not None:
            self._advance(*numbered)
        try:
            self.outbox.append(message)
        except EventTooLarge as exc:  # the agent's call fails at once, as if refused
            raise RpcError(INTERNAL_ERROR, str(exc)) from None

    def _note_session(self, message: dict[str, Any]) -> None:
        for part in (message.get("params"), message.get("result")):
            if isinstance(part, dict):
                session_id = part.get("sessionId")
                if isinstance(session_id, str):
                    self.sessions.add(session_id)

    async def _counted(
        self, first: bytes, frames: AsyncGenerator[bytes, None]
    ) -> AsyncIterator[bytes]:
        self.streams += 1
        try:
            yield first
            async with aclosing(frames):
                async for frame in frames:
                    yield frame
        finally:
            self.streams -= 1
            self.touch()
