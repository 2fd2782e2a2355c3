"""A connection's outgoing events: numbered, buffered while no stream is open, replayable."""

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

from adapters.acp_v1.coalesce import merged
from adapters.http.frames import error_frame, message_frame
from adapters.protocol.jsonrpc import INTERNAL_ERROR

# One write to the socket carries at most this much: a burst costs a few sends, not one each.
CHUNK_BYTES = 64 * 1024


class LastEventIdAhead(ValueError):
    """The client names an event this connection never sent."""


class EventTooLarge(ValueError):
    """An agent request too large for one event: the client was told, the caller must be."""


class Outbox:
    """Events are numbered from 1 and kept until the client acknowledges them (by
    reconnecting with Last-Event-ID) or, once written to a stream, until room is needed.

    - At most `max_events` / `max_bytes` are kept. Written events are evicted first; if
      events never written would have to go, the outbox fails instead: it drops them all and
      the stream gets one error frame. Nothing is dropped silently.
    - One event is at most `max_event_bytes`: a larger one would fill the buffer by itself.
      It is replaced, under its number, by what the client needs to go on: a response by a
      JSON-RPC error response to the same request, anything else by an `error` event naming
      it (and an agent request raises EventTooLarge, so that its caller is not left waiting).
    - One follower (stream) at a time: attaching another supersedes the previous one.
    - `written` is the position of the newest stream, so eviction never reaches an event
      that stream has still to send.
    - The newest event, while no stream has taken it yet, absorbs the next one when both
      can be one (adapters.acp_v1.coalesce): a client that reads slowly gets fewer,
      larger chunks under the same number. A taken event is never changed, so a replay
      re-sends exactly what was sent.
    """

    def __init__(
        self,
        *,
        max_events: int,
        max_bytes: int,
        on_failure: Callable[[str], None],
        max_event_bytes: int | None = None,
        tag: Callable[[], bytes] = lambda: b"",
        first_id: int = 1,
    ) -> None:
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._max_event_bytes = min(max_event_bytes or max_bytes, max_bytes)
        self._on_failure = on_failure
        self._tag = tag  # what follows the number in each message's id (event_ids.py)
        self._frames: list[bytes] = []
        self._head = 0  # index in _frames of the oldest kept event
        # Its id. A connection taken up again after a restart goes on from the client's.
        self._first_id = first_id
        self._next_id = first_id
        self._bytes = 0
        self._written = first_id - 1
        self._follower: object | None = None
        self._wakeup = asyncio.Event()
        self._progress = asyncio.Event()  # set whenever a stream wrote, left or gave up
        self._stalled = False  # the stream wrote nothing for a sender's whole patience
        self._closed = False
        self.failure: str | None = None
        self._failure_frame = b""
        self._taken = first_id - 1  # the newest event a stream has taken to write
        self._last: dict[str, Any] | None = None  # the newest event's message, if mergeable

    @property
    def last_id(self) -> int:
        return self._next_id - 1

    @property
    def kept(self) -> tuple[int, int]:
        """(events, bytes) held right now."""
        return len(self._frames) - self._head, self._bytes

    def append(self, message: dict[str, Any]) -> None:
        if self._closed or self.failure is not None:
            return
        if self._merge(message):
            return
        frame = message_frame(self._next_id, message, self._tag())
        size = len(frame)
        too_large = size > self._max_event_bytes
        if too_large:
            frame = self._stand_in(message, size)
        self._last = None if too_large else message
        self._next_id += 1
        self._frames.append(frame)
        self._bytes += len(frame)
        self._make_room()
        self._wakeup.set()
        if too_large and "method" in message and "id" in message:
            raise EventTooLarge(self._too_large_text(message, size))

    def _merge(self, message: dict[str, Any]) -> bool:
        """Fold `message` into the newest event if no stream has taken that yet."""
        if self._last is None or self.last_id <= self._taken or self._head >= len(self._frames):
            return False
        both = merged(self._last, message)
        if both is None:
            return False
        frame = message_frame(self.last_id, both, self._tag())
        if len(frame) > self._max_event_bytes:
            return False
        self._bytes += len(frame) - len(self._frames[-1])
        self._frames[-1] = frame
        self._last = both
        self._make_room()
        self._wakeup.set()
        return True

    async def room(self, patience: float) -> None:
        """Hold the sender while a stream is attached and more than half of the buffer is
        still to be written: a long replay (a history with images) then goes at the client's
        pace instead of overflowing. A stream that writes nothing for `patience` seconds is
        stalled: senders stop waiting for it (and the buffer's bounds apply, as before) until
        it writes again."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + patience
        while not self._stalled and self._behind():
            self._progress.clear()
            try:
                await asyncio.wait_for(self._progress.wait(), deadline - loop.time())
            except TimeoutError:
                self._stalled = True
                return
            deadline = loop.time() + patience  # it made progress

    def _behind(self) -> bool:
        if self._follower is None or self._closed or self.failure is not None:
            return False
        if self.last_id - self._written > self._max_events // 2:
            return True
        if self._bytes <= self._max_bytes // 2:
            return False  # cheap check first: the sum below only runs when it may matter
        start = self._head + max(0, self._written + 1 - self._first_id)
        return sum(len(f) for f in self._frames[start:]) > self._max_bytes // 2

    def _stand_in(self, message: dict[str, Any], size: int) -> bytes:
        text = self._too_large_text(message, size)
        if "method" not in message and "id" in message:  # a response: answer the request
            error = {"code": INTERNAL_ERROR, "message": text, "data": {"bytes": size}}
            return message_frame(
                self._next_id, {"jsonrpc": "2.0", "id": message["id"], "error": error}
            )
        about = {"method": str(message.get("method"))[:80], "id": message.get("id")}
        return error_frame("event_too_large", text, self._next_id, bytes=size, **about)

    def _too_large_text(self, message: dict[str, Any], size: int) -> str:
        what = f"{str(message['method'])[:80]} message" if "method" in message else "response"
        return (
            f"a {what} of {size} bytes is over the limit of {self._max_event_bytes} bytes for "
            "one event (IAC_CODE_HTTP_MAX_EVENT_BYTES); it was not sent"
        )

    def follow(self, last_event_id: int | None) -> AsyncGenerator[bytes, None]:
        """A new stream: after `last_event_id` if given (acknowledging everything up to it),
        else from the first event no stream has written. Supersedes any current stream."""
        if last_event_id is None or self.failure is not None:
            cursor = max(self._written, self._first_id - 1)
        else:
            cursor = self._acknowledge(last_event_id)
        token = object()
        self._follower = token
        self._written = cursor
        self._wakeup.set()  # the superseded stream wakes up and ends
        self._stalled = False
        self._progress.set()
        return self._follow(token, cursor)

    def close(self) -> None:
        """No more events: streams end after sending what is buffered."""
        self._closed = True
        self._wakeup.set()
        self._progress.set()

    def fail(self, code: str, message: str) -> None:
        if self.failure is not None:
            return
        self.failure = message
        self._failure_frame = error_frame(code, message, lastEventId=self.last_id)
        self._frames, self._head, self._bytes = [], 0, 0
        self._first_id = self._next_id
        self._wakeup.set()
        self._progress.set()
        self._on_failure(message)

    def _acknowledge(self, last_event_id: int) -> int:
        if last_event_id > self.last_id:
            raise LastEventIdAhead(
                f"Last-Event-ID {last_event_id} is ahead of this connection's last event "
                f"({self.last_id})"
            )
        if last_event_id < self._first_id - 1:
            self.fail(
                "replay_unavailable",
                f"events after {last_event_id} are no longer buffered (the oldest kept is "
                f"{self._first_id}); the connection is closed, start a new one",
            )
            return last_event_id
        while self._first_id <= last_event_id:
            self._drop_oldest()
        return last_event_id

    def _make_room(self) -> None:
        while self.kept[0] > self._max_events or self._bytes > self._max_bytes:
            if self._first_id > self._written:
                self.fail(
                    "buffer_overflow",
                    f"the client fell more than {self._max_events} events or "
                    f"{self._max_bytes} bytes behind; events after {self._written} would be "
                    "lost, so the connection is closed",
                )
                return
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        self._bytes -= len(self._frames[self._head])
        self._frames[self._head] = b""
        self._head += 1
        self._first_id += 1
        if self._head > 1024 and self._head * 2 > len(self._frames):
            del self._frames[: self._head]
            self._head = 0

    def _frames_after(self, cursor: int) -> tuple[bytes, int]:
        start = self._head + cursor + 1 - self._first_id
        end, size = start, 0
        while end < len(self._frames) and (size < CHUNK_BYTES or end == start):
            size += len(self._frames[end])
            end += 1
        self._taken = max(self._taken, cursor + end - start)
        return b"".join(self._frames[start:end]), cursor + end - start

    async def _follow(self, token: object, cursor: int) -> AsyncGenerator[bytes, None]:
        try:
            while self._follower is token:
                if self.failure is None and cursor < self._first_id - 1:
                    self.fail("replay_unavailable", f"events after {cursor} were evicted")
                if self.failure is not None:
                    yield self._failure_frame
                    return
                chunk, upto = self._frames_after(cursor)
                if chunk:
                    yield chunk  # resumes once the server has written it
                    cursor = upto
                    if self._follower is token:
                        self._written = max(self._written, upto)
                        self._stalled = False
                        self._progress.set()
                    continue
                if self._closed:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
        finally:
            if self._follower is token:
                self._follower = None
                self._progress.set()
