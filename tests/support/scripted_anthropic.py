"""A scripted Anthropic Messages API on 127.0.0.1, for tests that drive the real SDK.

Standard library only. The server runs in daemon threads of the test process and keeps all
its state there, so it serves the SDK in the same process as well as a spawned `iac-code`
pointed at it through ``IAC_CODE_BASE_URL=server.base_url``.

Every ``POST /v1/messages`` takes the next scripted reply, in order, and is recorded in
``server.requests``. Replies:

* :func:`stream` - a streamed message built from :func:`text`, :func:`thinking`,
  :func:`redacted_thinking` and :func:`tool_use` parts, sent as the exact SSE sequence of
  the real API (``message_start``, ``ping``, per block ``content_block_start`` /
  ``content_block_delta`` ... / ``content_block_stop``, ``message_delta``, ``message_stop``).
  ``delay`` sleeps between events; a :data:`HANG` part (or ``hang_after=n`` events) blocks
  the stream until ``release`` is set, the client disconnects or the server stops; ``error``
  ends it with a mid-stream ``event: error`` instead of ``message_delta`` / ``message_stop``.
* :func:`http_error` and its shortcuts :func:`overloaded` (529), :func:`api_error` (500),
  :func:`rate_limited` (429), :func:`auth_failed` (401) - an error status with the API's
  error JSON and ``retry-after-ms: 1`` so the SDK's own retries are immediate.
* :class:`RawSSE` - any hand-written event sequence.

Prompt caching: every request's ``cache_control`` breakpoints are recorded
(:attr:`RecordedRequest.cache_markers`, paths such as ``"system[0]"``, ``"tools[7]"``,
``"messages[2].content[1]"``); :attr:`RecordedRequest.messages` and
:attr:`RecordedRequest.system` give the conversation and the system text without them, as
before caching. ``ScriptedAnthropic(cache=True)`` also simulates the provider's cache: each
streamed reply's usage is replaced by counts from the request itself (characters / 4 of the
JSON of its tools, system and messages, in that order, the API's prefix order) - the longest
prefix that an earlier request marked with a breakpoint (looked up at each breakpoint and up
to 20 blocks before it, as the API does) is ``cache_read_input_tokens``, what the request's
last breakpoint adds to it is ``cache_creation_input_tokens``, the rest ``input_tokens``
(also in :attr:`RecordedRequest.usage`). Off by default: replies report what they say.

When the script runs dry the server answers 500 (with ``x-should-retry: false``) naming the
unexpected request, and remembers it: :meth:`ScriptedAnthropic.assert_script_consumed`
fails on it, and on replies left unplayed.

The ``wait_for_*`` methods block; from a coroutine call them through ``asyncio.to_thread``
so the event loop keeps driving the client. A spawned process must reach 127.0.0.1 directly:
clear ``HTTP(S)_PROXY`` / set ``NO_PROXY=127.0.0.1`` in its environment if a proxy is set.

This module holds the server and re-exports the rest: the replies it plays are in
:mod:`tests.support.anthropic_replies`, what it records in :mod:`tests.support.anthropic_requests`,
its HTTP handler in :mod:`tests.support.anthropic_handler` and the history checks in
:mod:`tests.support.anthropic_history`.

Example::

    with ScriptedAnthropic(stream(text("Hel", "lo"), input_tokens=3, output_tokens=2)) as server:
        client = AsyncAnthropic(api_key="k", base_url=server.base_url)
        ...
        assert server.requests[0].body["model"] == "claude-test"
        assert_valid_history(server.requests[0].body["messages"])
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from tests.support.anthropic_handler import MESSAGES_PATH, ScriptHTTPServer
from tests.support.anthropic_history import assert_valid_cache_markers, assert_valid_history
from tests.support.anthropic_replies import (
    HANG,
    ErrorReply,
    Hang,
    Part,
    RawSSE,
    RedactedThinkingPart,
    Reply,
    StreamReply,
    TextPart,
    ThinkingPart,
    ToolUsePart,
    api_error,
    auth_failed,
    http_error,
    overloaded,
    rate_limited,
    redacted_thinking,
    stream,
    stream_error,
    text,
    thinking,
    tool_use,
)
from tests.support.anthropic_requests import PromptCache, RecordedRequest, sent_key
from tests.support.patience import PATIENCE

__all__ = [
    "HANG",
    "MESSAGES_PATH",
    "ErrorReply",
    "Hang",
    "Part",
    "RawSSE",
    "RecordedRequest",
    "RedactedThinkingPart",
    "Reply",
    "ScriptedAnthropic",
    "StreamReply",
    "TextPart",
    "ThinkingPart",
    "ToolUsePart",
    "api_error",
    "assert_valid_cache_markers",
    "assert_valid_history",
    "auth_failed",
    "http_error",
    "overloaded",
    "rate_limited",
    "redacted_thinking",
    "stream",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
]


class ScriptedAnthropic:
    """The scripted server. Use as a context manager, or call start() / stop()."""

    def __init__(
        self, *replies: Reply, host: str = "127.0.0.1", port: int = 0, cache: bool = False
    ) -> None:
        self._address = (host, port)
        self._cache = PromptCache() if cache else None
        self._lock = threading.Condition()
        self._queue: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._disconnects = 0
        self._hanging = 0
        self._hangs_started = 0
        self._streams_sent = 0
        self._stopping = threading.Event()
        self._httpd: ScriptHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._keys: frozenset[str] | None = None  # GET /v1/models: off until accept_keys
        self._model_listings: list[dict[str, str]] = []

    # -- lifecycle --

    def start(self) -> ScriptedAnthropic:
        if self._httpd is not None:
            raise RuntimeError("the scripted server is already running")
        self._stopping.clear()
        self._httpd = ScriptHTTPServer(self, self._address)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"scripted-anthropic:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, end hanging streams, close every connection and join the threads."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join(timeout)
        with self._lock:
            connections = dict(self._connections)
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout
        for handler_thread in connections.values():
            handler_thread.join(max(0.0, deadline - time.monotonic()))
        httpd.server_close()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedAnthropic:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses --

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script --

    def script(self, *replies: Reply) -> None:
        """Queue more replies after those already queued."""
        with self._lock:
            self._queue.extend(replies)

    def accept_keys(self, *keys: str) -> None:
        """Serve `GET /v1/models` (a key check): 200 for these keys, else 401."""
        self._keys = frozenset(keys)

    @property
    def model_listings(self) -> list[dict[str, str]]:
        """The headers of each `GET /v1/models` served, in order."""
        return list(self._model_listings)

    @staticmethod
    def sent_key(request: RecordedRequest | Mapping[str, str]) -> str | None:
        """The API key a request (or a request's headers) carried."""
        return sent_key(request.headers if isinstance(request, RecordedRequest) else request)

    @property
    def pending(self) -> int:
        """Replies not played yet."""
        with self._lock:
            return len(self._queue)

    # -- what happened --

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order (a snapshot)."""
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError("the scripted server received no request")
            return self._requests[-1]

    @property
    def unexpected_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self._requests if r.reply is None]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in handler threads (should stay empty)."""
        with self._lock:
            return list(self._errors)

    @property
    def client_disconnects(self) -> int:
        """Streams the client abandoned (closed the connection) before they ended."""
        with self._lock:
            return self._disconnects

    @property
    def hanging(self) -> int:
        """Streams currently blocked at a hang point."""
        with self._lock:
            return self._hanging

    def wait_for_requests(self, count: int, timeout: float = PATIENCE) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; AssertionError on timeout."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout):
                raise AssertionError(
                    f"expected {count} request(s) within {timeout}s, got {len(self._requests)}"
                )
            return list(self._requests)

    def wait_for_streams(self, count: int = 1, timeout: float = 30.0) -> None:
        """Block until `count` event streams in total were sent to their end."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._streams_sent >= count, timeout):
                raise AssertionError(f"expected {count} complete stream(s) within {timeout}s")

    def _stream_sent(self) -> None:
        with self._lock:
            self._streams_sent += 1
            self._lock.notify_all()

    def wait_for_hang(self, count: int = 1, timeout: float = PATIENCE) -> None:
        """Block until `count` streams in total have reached a hang point."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._hangs_started >= count, timeout):
                raise AssertionError(f"no stream reached its hang point within {timeout}s")

    def wait_for_disconnect(self, count: int = 1, timeout: float = PATIENCE) -> None:
        """Block until the client has abandoned `count` streams in total."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._disconnects >= count, timeout):
                raise AssertionError(
                    f"expected {count} client disconnect(s) within {timeout}s, "
                    f"saw {self._disconnects}"
                )

    def assert_script_consumed(self) -> None:
        """Every scripted reply was played, no request went unanswered, no handler failed."""
        with self._lock:
            problems = []
            if self._queue:
                problems.append(f"{len(self._queue)} scripted reply(ies) never requested")
            unexpected = [r for r in self._requests if r.reply is None]
            if unexpected:
                problems.append(
                    "unexpected request(s): "
                    + ", ".join(f"#{r.number} {r.method} {r.path}" for r in unexpected)
                )
            if self._errors:
                problems.append(f"handler errors: {self._errors!r}")
        if problems:
            raise AssertionError("scripted Anthropic server: " + "; ".join(problems))

    # -- called from handler threads --

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any) -> RecordedRequest:
        with self._lock:
            reply = None
            if method == "POST" and path == MESSAGES_PATH and self._queue:
                reply = self._queue.popleft()
            usage = None
            if self._cache is not None and isinstance(reply, StreamReply):
                usage = self._cache.usage(body)  # under the lock: in arrival order
            recorded = RecordedRequest(
                number=len(self._requests) + 1,
                method=method,
                path=path,
                headers=headers,
                body=body,
                reply=reply,
                usage=usage,
            )
            self._requests.append(recorded)
            self._lock.notify_all()
            return recorded

    def _record_error(self, error: BaseException | None) -> None:
        if error is None or isinstance(error, ConnectionError):
            return  # the peer went away between requests: not a server failure
        with self._lock:
            self._errors.append(error)

    def _connection_opened(self, sock: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._connections[sock] = thread

    def _connection_closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._connections.pop(sock, None)

    def _client_disconnected(self) -> None:
        with self._lock:
            self._disconnects += 1
            self._lock.notify_all()

    def _hang_started(self) -> None:
        with self._lock:
            self._hanging += 1
            self._hangs_started += 1
            self._lock.notify_all()

    def _hang_ended(self) -> None:
        with self._lock:
            self._hanging -= 1
            self._lock.notify_all()
