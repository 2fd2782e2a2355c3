"""One client's ACP connection over HTTP: the protocol core's `Connection`, and the outbox
its messages go to."""

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from adapters.http.config import HttpConfig
from adapters.http.outbox import EventTooLarge, Outbox
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import INTERNAL_ERROR, RequestId, RpcError


class HttpConnection:
    def __init__(
        self,
        connection_id: str,
        dispatcher: Dispatcher,
        config: HttpConfig,
        on_failure: Callable[["HttpConnection"], None],
        clock: Callable[[], float],
    ) -> None:
        self.id = connection_id
        self.outbox = Outbox(
            max_events=config.buffer_max_events,
            max_bytes=config.buffer_max_bytes,
            max_event_bytes=config.max_event_bytes,
            on_failure=lambda _reason: on_failure(self),
        )
        self._patience = config.sender_patience_seconds
        self.protocol = Connection(self._send, dispatcher)
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

    async def _send(self, message: dict[str, Any]) -> None:
        pending = self._initializing
        if pending is not None and "method" not in message and message.get("id") == pending[0]:
            if not pending[1].done():
                pending[1].set_result(message)
            return
        self._note_session(message)
        await self.outbox.room(self._patience)
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
