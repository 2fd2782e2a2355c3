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

Example::

    with ScriptedAnthropic(stream(text("Hel", "lo"), input_tokens=3, output_tokens=2)) as server:
        client = AsyncAnthropic(api_key="k", base_url=server.base_url)
        ...
        assert server.requests[0].body["model"] == "claude-test"
        assert_valid_history(server.requests[0].body["messages"])
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import urlsplit

from tests.support.patience import PATIENCE

__all__ = [
    "HANG",
    "ErrorReply",
    "Hang",
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
    "stream",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
]

MESSAGES_PATH: Final = "/v1/messages"
MODELS_PATH: Final = "/v1/models"  # served once `accept_keys` named the keys it takes
_POLL_SECONDS: Final = 0.02

# ---------------------------------------------------------------------------------------------
# Script: parts of a streamed message, and the replies themselves
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextPart:
    """A text block; each piece is one ``text_delta``."""

    pieces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """A thinking block: one ``thinking_delta`` per piece, then one ``signature_delta``."""

    pieces: tuple[str, ...]
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedThinkingPart:
    """A redacted_thinking block: its data comes whole in ``content_block_start``."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolUsePart:
    """A tool_use block; its input is streamed as ``input_json_delta`` pieces."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None  # default: toolu_scripted_<block index>
    chunks: int = 3


@dataclass(frozen=True, slots=True)
class Hang:
    """Marker part: stop streaming here until released, disconnected or stopped."""


HANG: Final = Hang()

Part = TextPart | ThinkingPart | RedactedThinkingPart | ToolUsePart | Hang


def text(*pieces: str) -> TextPart:
    if not pieces:
        raise ValueError("text() needs at least one piece")
    return TextPart(pieces=pieces)


def thinking(*pieces: str, signature: str = "c2NyaXB0ZWQtc2lnbmF0dXJl") -> ThinkingPart:
    if not pieces:
        raise ValueError("thinking() needs at least one piece")
    return ThinkingPart(pieces=pieces, signature=signature)


def redacted_thinking(data: str = "cmVkYWN0ZWQ=") -> RedactedThinkingPart:
    return RedactedThinkingPart(data=data)


def tool_use(
    name: str, input: Mapping[str, Any], *, id: str | None = None, chunks: int = 3
) -> ToolUsePart:
    return ToolUsePart(name=name, input=dict(input), id=id, chunks=max(1, chunks))


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamReply:
    """A 200 ``text/event-stream`` answer built from parts."""

    parts: tuple[Part, ...] = ()
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    model: str | None = None  # default: the model the request named
    message_id: str | None = None  # default: msg_scripted_<request number>
    ping: bool = True  # the real API sends one `ping` right after message_start
    delay: float = 0.0  # seconds slept before every event after the first
    hang_after: int | None = None  # hang once this many events were sent
    release: threading.Event | None = None  # ends a hang when set
    # (error type, message): sent as `event: error` after the parts, instead of
    # message_delta / message_stop.
    error: tuple[str, str] | None = None

    def events(self, request_body: Any = None, *, number: int = 1) -> list[tuple[str, Any]]:
        """The (event type, data) sequence; a Hang marker is ("<hang>", None)."""
        body = request_body if isinstance(request_body, dict) else {}
        usage: dict[str, Any] = {"input_tokens": self.input_tokens}
        if self.cache_creation_input_tokens is not None:
            usage["cache_creation_input_tokens"] = self.cache_creation_input_tokens
        if self.cache_read_input_tokens is not None:
            usage["cache_read_input_tokens"] = self.cache_read_input_tokens
        usage["output_tokens"] = 1
        events: list[tuple[str, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": self.message_id or f"msg_scripted_{number:04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": self.model or body.get("model") or "claude-scripted",
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            )
        ]
        if self.ping:
            events.append(("ping", {"type": "ping"}))
        index = 0
        for part in self.parts:
            if isinstance(part, Hang):
                events.append(("<hang>", None))
                continue
            events.extend(_block_events(index, part))
            index += 1
        if self.error is not None:
            error_type, message = self.error
            events.append(("error", _error_body(error_type, message)))
            return _with_hang_at(events, self.hang_after)
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
                    "usage": {"output_tokens": self.output_tokens},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return _with_hang_at(events, self.hang_after)


def stream(
    *parts: Part,
    stop_reason: str | None = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = None,
    cache_creation_input_tokens: int | None = None,
    **options: Any,
) -> StreamReply:
    """A streamed message. ``options`` are the other :class:`StreamReply` fields."""
    return StreamReply(
        parts=parts,
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        **options,
    )


def stream_error(
    *parts: Part,
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    **options: Any,
) -> StreamReply:
    """A 200 stream that sends its parts, then ``event: error`` (how the API fails mid-answer)."""
    return StreamReply(parts=parts, error=(error_type, message), **options)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReply:
    """An HTTP error status with the API's error JSON."""

    status: int
    error_type: str
    message: str
    retry_after_ms: float | None = 1
    should_retry: bool | None = None  # sets x-should-retry, overriding the SDK's policy
    headers: Mapping[str, str] = field(default_factory=dict)


def http_error(
    status: int,
    error_type: str = "api_error",
    message: str = "Internal server error",
    *,
    retry_after_ms: float | None = 1,
    should_retry: bool | None = None,
    headers: Mapping[str, str] | None = None,
) -> ErrorReply:
    return ErrorReply(
        status=status,
        error_type=error_type,
        message=message,
        retry_after_ms=retry_after_ms,
        should_retry=should_retry,
        headers=dict(headers or {}),
    )


def overloaded(message: str = "Overloaded", **kwargs: Any) -> ErrorReply:
    return http_error(529, "overloaded_error", message, **kwargs)


def api_error(message: str = "Internal server error", **kwargs: Any) -> ErrorReply:
    return http_error(500, "api_error", message, **kwargs)


def rate_limited(
    message: str = "Number of requests has exceeded your rate limit", **kwargs: Any
) -> ErrorReply:
    return http_error(429, "rate_limit_error", message, **kwargs)


def auth_failed(message: str = "invalid x-api-key", **kwargs: Any) -> ErrorReply:
    return http_error(401, "authentication_error", message, **kwargs)


@dataclass(frozen=True, slots=True, kw_only=True)
class RawSSE:
    """A 200 event stream of exactly these (event type, JSON-able data) pairs."""

    events: Sequence[tuple[str, Any]]
    delay: float = 0.0


Reply = StreamReply | ErrorReply | RawSSE


def _sent_key(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries: `x-api-key`, or a bearer token (as newer SDKs send it)."""
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    return headers.get("x-api-key") or bearer or None


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _with_hang_at(events: list[tuple[str, Any]], hang_after: int | None) -> list[tuple[str, Any]]:
    if hang_after is None:
        return events
    real = [e for e in events if e[0] != "<hang>"]
    return [*real[:hang_after], ("<hang>", None), *real[hang_after:]]


def _block_events(index: int, part: Part) -> Iterator[tuple[str, Any]]:
    def start(block: dict[str, Any]) -> tuple[str, Any]:
        return (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )

    def delta(payload: dict[str, Any]) -> tuple[str, Any]:
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": payload},
        )

    match part:
        case TextPart(pieces=pieces):
            yield start({"type": "text", "text": ""})
            for piece in pieces:
                yield delta({"type": "text_delta", "text": piece})
        case ThinkingPart(pieces=pieces, signature=signature):
            yield start({"type": "thinking", "thinking": "", "signature": ""})
            for piece in pieces:
                yield delta({"type": "thinking_delta", "thinking": piece})
            yield delta({"type": "signature_delta", "signature": signature})
        case RedactedThinkingPart(data=data):
            yield start({"type": "redacted_thinking", "data": data})
        case ToolUsePart(name=name, input=input_, id=id_, chunks=chunks):
            tool_id = id_ or f"toolu_scripted_{index:02d}"
            yield start({"type": "tool_use", "id": tool_id, "name": name, "input": {}})
            yield delta({"type": "input_json_delta", "partial_json": ""})
            encoded = json.dumps(dict(input_), separators=(",", ":"))
            size = max(1, -(-len(encoded) // chunks))
            for offset in range(0, len(encoded), size):
                yield delta(
                    {"type": "input_json_delta", "partial_json": encoded[offset : offset + size]}
                )
        case _:
            raise TypeError(f"not a stream part: {part!r}")
    yield ("content_block_stop", {"type": "content_block_stop", "index": index})


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    number: int  # 1-based, in arrival order
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    reply: Reply | None  # None when the script was exhausted (or the path was wrong)
    # The usage the simulated cache reported (ScriptedAnthropic(cache=True)), else None.
    usage: Mapping[str, int] | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as sent, without its cache_control markers and without the
        `<environment>` block the agent sends with each turn's prompt (see `environment`)."""
        return [_without_environment(m) for m in _without_markers(self.body["messages"])]

    @property
    def environment(self) -> list[str]:
        """The `<environment>` blocks the request carries, in order (one per turn)."""
        return [
            block["text"]
            for message in self.body["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if _is_environment(block)
        ]

    @property
    def system(self) -> str:
        """The system prompt's text, whether sent as a string or as text blocks."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "".join(block.get("text", "") for block in system)

    @property
    def cache_markers(self) -> list[str]:
        """Where the request put cache_control breakpoints, in the API's prefix order."""
        return [path for path, _, marked in _prefix_items(self.body) if marked]


def _is_environment(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and str(block.get("text", "")).startswith("<environment>")
    )


def _without_environment(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(_is_environment(b) for b in content):
        return message
    return {**message, "content": [b for b in content if not _is_environment(b)]}


_LOOKBACK: Final = 20  # blocks before a breakpoint the API checks for an earlier entry


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _prefix_items(body: Any) -> Iterator[tuple[str, str, bool]]:
    """(path, JSON without markers, marked) for each block of the request's prefix: the
    tools, the system blocks, then each message's blocks (with its role)."""
    if not isinstance(body, dict):
        return
    for i, tool in enumerate(body.get("tools") or []):
        yield f"tools[{i}]", json.dumps(_without_markers(tool)), "cache_control" in tool
    system = body.get("system")
    if isinstance(system, str) and system:
        yield "system", json.dumps(system), False
    elif isinstance(system, list):
        for i, block in enumerate(system):
            yield f"system[{i}]", json.dumps(_without_markers(block)), "cache_control" in block
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, block in enumerate(blocks or []):
            item = json.dumps([message.get("role"), j, _without_markers(block)])
            marked = isinstance(block, dict) and "cache_control" in block
            yield f"messages[{i}].content[{j}]", item, marked


class _PromptCache:
    """The provider's prompt cache, by exact prefix: what one request marked, a later one
    with the same prefix reads. Entries never expire (a test is shorter than the TTL)."""

    def __init__(self) -> None:
        self._entries: set[str] = set()

    def usage(self, body: Any) -> dict[str, int]:
        keys: list[str] = []
        ends: list[int] = []  # characters of the prefix up to each block
        breakpoints: list[int] = []
        digest = hashlib.sha256(str(body.get("model")).encode() if isinstance(body, dict) else b"")
        chars = 0
        for index, (_, item, marked) in enumerate(_prefix_items(body)):
            digest.update(item.encode() + b"\0")
            keys.append(digest.hexdigest())
            chars += len(item)
            ends.append(chars)
            if marked:
                breakpoints.append(index)
        read = 0
        for point in breakpoints:
            for index in range(point, max(-1, point - _LOOKBACK - 1), -1):
                if keys[index] in self._entries:
                    read = max(read, ends[index] // 4)
                    break
        written = max(0, ends[breakpoints[-1]] // 4 - read) if breakpoints else 0
        self._entries.update(keys[point] for point in breakpoints)
        return {
            "input_tokens": chars // 4 - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def _with_usage(events: list[tuple[str, Any]], usage: Mapping[str, int]) -> list[tuple[str, Any]]:
    """The events with message_start's usage counts replaced by `usage`."""
    replaced = []
    for event_type, data in events:
        if event_type == "message_start":
            message = data["message"]
            data = {**data, "message": {**message, "usage": {**message["usage"], **usage}}}
        replaced.append((event_type, data))
    return replaced


class _Disconnected(Exception):
    pass


class _Stopped(Exception):
    pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: ScriptedAnthropic, address: tuple[str, int]) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # ThreadingMixIn's, but the connection is tracked before its thread runs, so stop()
        # can always reach it.
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"scripted-anthropic-conn:{client_address[1]}",
            daemon=True,
        )
        self.owner._connection_opened(request, thread)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            self.owner._connection_closed(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Never print tracebacks from handler threads; keep them for the test to inspect.
        self.owner._record_error(sys.exc_info()[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Each event goes out when it is written, as a streaming API sends it: with Nagle's
    # algorithm a small write could wait up to a delayed ACK (~40 ms) for the one before.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    # -- request --

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        owner = self.server.owner
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = urlsplit(self.path).path
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.command == "GET" and path == MODELS_PATH and owner._keys is not None:
            owner._model_listings.append(headers)  # before the answer the client waits for
            self._send_models(_sent_key(headers) in owner._keys)
            return
        recorded = owner._take(self.command, path, headers, body)
        try:
            match recorded.reply:
                case None:
                    self._send_unexpected(recorded)
                case ErrorReply() as reply:
                    self._send_error(reply, recorded.number)
                case StreamReply() as reply:
                    events = reply.events(body, number=recorded.number)
                    if recorded.usage is not None:
                        events = _with_usage(events, recorded.usage)
                    self._send_events(events, reply.delay, reply.release, recorded.number)
                case RawSSE(events=events, delay=delay):
                    self._send_events(list(events), delay, None, recorded.number)
        except (_Disconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            owner._client_disconnected()
            self.close_connection = True
        except _Stopped:
            self.close_connection = True

    # -- replies --

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, reply: ErrorReply, number: int) -> None:
        headers: dict[str, str] = {"request-id": f"req_scripted_{number:04d}"}
        if reply.retry_after_ms is not None:
            headers["retry-after-ms"] = f"{reply.retry_after_ms:g}"
        if reply.should_retry is not None:
            headers["x-should-retry"] = "true" if reply.should_retry else "false"
        headers.update(reply.headers)
        payload = _error_body(reply.error_type, reply.message)
        payload["request_id"] = headers["request-id"]
        self._send_json(reply.status, payload, headers)

    def _send_models(self, accepted: bool) -> None:
        """The model listing `iac-code login` checks a key with: one model, or a 401."""
        if not accepted:
            self._send_error(http_error(401, "authentication_error", "invalid x-api-key"), 0)
            return
        model = {"type": "model", "id": "claude-test", "display_name": "Claude Test"}
        page = {"data": [model], "has_more": False, "first_id": "claude-test"}
        self._send_json(200, {**page, "last_id": "claude-test"}, {})

    def _send_unexpected(self, recorded: RecordedRequest) -> None:
        if recorded.path != MESSAGES_PATH or recorded.method != "POST":
            message = (
                f"scripted_anthropic: request #{recorded.number} {recorded.method} "
                f"{recorded.path} is not served; only POST {MESSAGES_PATH} is"
            )
            status = 404
            error_type = "not_found_error"
        else:
            message = (
                f"scripted_anthropic: script exhausted; unexpected request #{recorded.number} "
                f"to {MESSAGES_PATH} (no reply was queued for it)"
            )
            status = 500
            error_type = "api_error"
        payload = _error_body(error_type, message)
        self._send_json(status, payload, {"x-should-retry": "false"})
        self.close_connection = True

    def _send_events(
        self,
        events: list[tuple[str, Any]],
        delay: float,
        release: threading.Event | None,
        number: int,
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_scripted_{number:04d}")
        self.end_headers()
        first = True
        for event_type, data in events:
            if event_type == "<hang>":
                self._hang(release)
                continue
            if not first and delay > 0:
                self._wait(delay, None)
            first = False
            payload = f"event: {event_type}\ndata: {json.dumps(data)}\n\n".encode()
            self._write_chunk(payload)
        self._write_chunk(b"")
        self.server.owner._stream_sent()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _hang(self, release: threading.Event | None) -> None:
        self.server.owner._hang_started()
        try:
            self._wait(None, release)
        finally:
            self.server.owner._hang_ended()

    def _wait(self, seconds: float | None, release: threading.Event | None) -> None:
        """Sleep `seconds` (or until `release` when None), watching for stop and disconnect."""
        owner = self.server.owner
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            if owner._stopping.is_set():
                raise _Stopped
            if release is not None and release.is_set():
                return
            remaining = _POLL_SECONDS
            if deadline is not None:
                remaining = min(remaining, deadline - time.monotonic())
                if remaining <= 0:
                    return
            readable, _, _ = select.select([self.connection], [], [], remaining)
            if readable and self._peer_closed():
                raise _Disconnected

    def _peer_closed(self) -> bool:
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True


class ScriptedAnthropic:
    """The scripted server. Use as a context manager, or call start() / stop()."""

    def __init__(
        self, *replies: Reply, host: str = "127.0.0.1", port: int = 0, cache: bool = False
    ) -> None:
        self._address = (host, port)
        self._cache = _PromptCache() if cache else None
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
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._keys: frozenset[str] | None = None  # GET /v1/models: off until accept_keys
        self._model_listings: list[dict[str, str]] = []

    # -- lifecycle --

    def start(self) -> ScriptedAnthropic:
        if self._httpd is not None:
            raise RuntimeError("the scripted server is already running")
        self._stopping.clear()
        self._httpd = _HTTPServer(self, self._address)
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
        return _sent_key(request.headers if isinstance(request, RecordedRequest) else request)

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


# ---------------------------------------------------------------------------------------------
# What the real provider accepts as a conversation
# ---------------------------------------------------------------------------------------------


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content.strip():
            raise AssertionError(f"{where}.content: empty string content")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise AssertionError(f"{where}.content: must be a string or a list, got {content!r}")
    if not content:
        raise AssertionError(f"{where}.content: empty content list")
    for j, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise AssertionError(f"{where}.content[{j}]: not a typed block: {block!r}")
    return content


_IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _check_image(block: Mapping[str, Any], at: str, role: str) -> None:
    if role != "user":
        raise AssertionError(f"{at}: image block in a {role} message")
    source = block.get("source")
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        raise AssertionError(f"{at}: image source must be base64, got {source!r:.200}")
    if source.get("media_type") not in _IMAGE_TYPES:
        raise AssertionError(f"{at}: image media_type {source.get('media_type')!r} not supported")
    if not isinstance(source.get("data"), str) or not source["data"]:
        raise AssertionError(f"{at}: image without data")


def assert_valid_history(messages: Iterable[Mapping[str, Any]] | Any) -> None:
    """Fail with a precise AssertionError unless the real API would accept `messages`."""
    if not isinstance(messages, list | tuple):
        raise AssertionError(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise AssertionError("messages: empty conversation")
    previous_role: str | None = None
    previous_tool_uses: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise AssertionError(f"{where}: not an object: {message!r}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise AssertionError(f"{where}.role: must be 'user' or 'assistant', got {role!r}")
        if i == 0 and role != "user":
            raise AssertionError(f"{where}: the conversation must start with a user message")
        if role == previous_role:
            raise AssertionError(
                f"{where}: two {role} messages in a row (messages[{i - 1}] and {where}); "
                "roles must alternate"
            )
        blocks = _blocks(message.get("content"), where)

        results = [b for b in blocks if b["type"] == "tool_result"]
        if previous_tool_uses:
            answered = [b.get("tool_use_id") for b in results]
            missing = [t for t in previous_tool_uses if t not in answered]
            if missing:
                raise AssertionError(
                    f"{where}: tool_use id(s) {missing} from messages[{i - 1}] have no "
                    "tool_result in this message"
                )
        if results:
            leading = 0
            while leading < len(blocks) and blocks[leading]["type"] == "tool_result":
                leading += 1
            if leading != len(results):
                raise AssertionError(
                    f"{where}.content[{leading}]: tool_result blocks must come before any "
                    "other content in a user message"
                )
        seen_results: set[str] = set()
        tool_uses: list[str] = []
        for j, block in enumerate(blocks):
            at = f"{where}.content[{j}]"
            kind = block["type"]
            if kind == "text":
                value = block.get("text")
                if not isinstance(value, str) or not value.strip():
                    raise AssertionError(f"{at}: text block must hold non-whitespace text")
            elif kind in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    raise AssertionError(f"{at}: {kind} block in a {role} message")
                if kind == "thinking":
                    if not isinstance(block.get("thinking"), str):
                        raise AssertionError(f"{at}: thinking block without thinking text")
                    signature = block.get("signature")
                    if not isinstance(signature, str) or not signature:
                        raise AssertionError(f"{at}: thinking block without a signature")
                elif not block.get("data"):
                    raise AssertionError(f"{at}: redacted_thinking block without data")
            elif kind == "tool_use":
                if role != "assistant":
                    raise AssertionError(f"{at}: tool_use block in a {role} message")
                tool_id = block.get("id")
                if not isinstance(tool_id, str) or not tool_id:
                    raise AssertionError(f"{at}: tool_use block without an id")
                if tool_id in tool_uses:
                    raise AssertionError(f"{at}: duplicate tool_use id {tool_id!r}")
                if not isinstance(block.get("name"), str) or not block["name"]:
                    raise AssertionError(f"{at}: tool_use block without a name")
                if not isinstance(block.get("input"), dict):
                    raise AssertionError(f"{at}: tool_use input must be an object")
                tool_uses.append(tool_id)
            elif kind == "tool_result":
                if role != "user":
                    raise AssertionError(f"{at}: tool_result block in a {role} message")
                tool_id = block.get("tool_use_id")
                if tool_id not in previous_tool_uses:
                    raise AssertionError(
                        f"{at}: tool_result for {tool_id!r} does not answer a tool_use of "
                        f"the message right before (which used {previous_tool_uses})"
                    )
                if tool_id in seen_results:
                    raise AssertionError(f"{at}: second tool_result for {tool_id!r}")
                seen_results.add(tool_id)
            elif kind == "image":
                _check_image(block, at, role)
        previous_role = role
        previous_tool_uses = tool_uses
    if previous_tool_uses:
        raise AssertionError(
            f"messages[{len(messages) - 1}]: tool_use id(s) {previous_tool_uses} are never "
            "answered (the conversation ends on them)"
        )


_UNCACHEABLE: Final = ("thinking", "redacted_thinking")


def assert_valid_cache_markers(body: Mapping[str, Any]) -> None:
    """Fail unless the real API would accept the request's cache_control breakpoints: at
    most 4, each ``{"type": "ephemeral"}`` (optionally with a ttl), none on a thinking block
    or an empty text block."""
    placed: list[tuple[str, Any]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            placed.append((f"tools[{i}]", tool))
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            placed.append((f"system[{i}]", block))
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" in block:
                placed.append((f"messages[{i}].content[{j}]", block))
    if len(placed) > 4:
        raise AssertionError(
            f"{len(placed)} cache_control breakpoints ({[p for p, _ in placed]}); at most 4"
        )
    for at, block in placed:
        marker = block["cache_control"]
        if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
            raise AssertionError(f"{at}.cache_control: must be {{'type': 'ephemeral'}}")
        if set(marker) - {"type", "ttl"}:
            raise AssertionError(f"{at}.cache_control: unknown fields {sorted(marker)}")
        if block.get("type") in _UNCACHEABLE:
            raise AssertionError(f"{at}: a {block['type']} block cannot carry cache_control")
        if block.get("type") == "text" and not block.get("text"):
            raise AssertionError(f"{at}: an empty text block cannot carry cache_control")
