"""A scripted OpenAI chat-completions API on 127.0.0.1, for tests that drive the real SDK.

Standard library only. The server runs in daemon threads of the test process, so it serves
the SDK in the same process as well as a spawned `iac-code` pointed at it through
``IAC_CODE_BASE_URL=server.base_url`` (which already ends in ``/v1``, as OpenAI's does).

Every ``POST …/chat/completions`` takes the next scripted reply, in order, and is recorded in
``server.requests``. Replies:

* :func:`stream` - a streamed completion built from :func:`text`, :func:`reasoning` and
  :func:`tool_call` parts, sent exactly as the real API streams it: one ``data:`` line per
  ``chat.completion.chunk`` (the role delta first, then content / ``reasoning_content`` /
  ``tool_calls`` deltas - a tool call's index, id and name in its first delta, its arguments
  in ``chunks`` pieces after), a chunk with the ``finish_reason``, a usage chunk with
  ``choices: []`` when the request asked ``stream_options.include_usage``, then
  ``data: [DONE]``. ``error`` ends the stream with a mid-stream ``data: {"error": …}`` line.
* :func:`http_error` and its shortcuts :func:`rate_limited` (429), :func:`auth_failed` (401),
  :func:`server_error` (500), :func:`context_overflow` (400 ``context_length_exceeded``) - an
  error status with OpenAI's error JSON and ``retry-after`` (seconds; default 0.001, so the
  SDK's own retries are immediate).
* :class:`RawSSE` - any hand-written ``data:`` payloads.

When the script runs dry the server answers 500 with ``x-should-retry: false`` naming the
unexpected request, and remembers it: :meth:`ScriptedOpenAI.assert_script_consumed` fails on
it, and on replies left unplayed. :func:`assert_valid_chat` checks a request's ``messages``
the way the real API does (tool messages answer the tool calls right before them).

Example::

    with ScriptedOpenAI(stream(text("Hel", "lo"), prompt_tokens=3, cached_tokens=1)) as server:
        client = AsyncOpenAI(api_key="k", base_url=server.base_url)
        ...
        assert server.requests[0].body["model"] == "qwen-test"

This module holds the server and re-exports the rest: the replies it plays are in
:mod:`tests.support.openai_replies`, the conversation check in :mod:`tests.support.openai_history`.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import urlsplit

from tests.support.openai_history import assert_valid_chat
from tests.support.openai_replies import (
    ErrorReply,
    RawSSE,
    ReasoningPart,
    Reply,
    StreamReply,
    TextPart,
    ToolCallPart,
    auth_failed,
    context_overflow,
    error_object,
    http_error,
    rate_limited,
    reasoning,
    server_error,
    stream,
    text,
    tool_call,
)
from tests.support.patience import PATIENCE

__all__ = [
    "ErrorReply",
    "RawSSE",
    "ReasoningPart",
    "RecordedRequest",
    "Reply",
    "ScriptedOpenAI",
    "StreamReply",
    "TextPart",
    "ToolCallPart",
    "assert_valid_chat",
    "auth_failed",
    "context_overflow",
    "http_error",
    "rate_limited",
    "reasoning",
    "server_error",
    "stream",
    "text",
    "tool_call",
]

COMPLETIONS_SUFFIX: Final = "/chat/completions"

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

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as sent, without the `<environment>` block the agent sends with
        each turn's prompt (see `environment`)."""
        return [_without_environment(m) for m in self.body["messages"]]

    @property
    def environment(self) -> list[str]:
        """The `<environment>` blocks the request carries, in order (one per turn)."""
        found = []
        for message in self.body["messages"]:
            content = message.get("content")
            texts = (
                [content]
                if isinstance(content, str)
                else [p.get("text", "") for p in content or [] if isinstance(p, dict)]
            )
            found += [t[: t.index(END) + len(END)] for t in texts if _has_environment(t)]
        return found


END = "</environment>"


def _has_environment(text: object) -> bool:
    return isinstance(text, str) and text.startswith("<environment>") and END in text


def _without_environment(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and _has_environment(content):
        return {**message, "content": content[content.index(END) + len(END) :].lstrip("\n")}
    if isinstance(content, list) and any(
        isinstance(p, dict) and _has_environment(p.get("text")) for p in content
    ):
        kept = [p for p in content if not (isinstance(p, dict) and _has_environment(p.get("text")))]
        return {**message, "content": kept}
    return message


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: ScriptedOpenAI, address: tuple[str, int]) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Never print tracebacks from handler threads; keep them for the test to inspect.
        self.owner._record_error(sys.exc_info()[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        recorded = self.server.owner._take(
            self.command,
            urlsplit(self.path).path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        try:
            match recorded.reply:
                case None:
                    self._send_unexpected(recorded)
                case ErrorReply() as reply:
                    self._send_error(reply, recorded.number)
                case StreamReply() as reply:
                    self._send_sse(reply.payloads(body, number=recorded.number), recorded.number)
                case RawSSE(payloads=payloads):
                    self._send_sse(list(payloads), recorded.number)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True

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
        headers = {"x-request-id": f"req_scripted_{number:04d}"}
        if reply.retry_after is not None:
            headers["retry-after"] = f"{reply.retry_after:g}"
        if reply.should_retry is not None:
            headers["x-should-retry"] = "true" if reply.should_retry else "false"
        headers.update(reply.headers)
        payload = {"error": error_object(reply.message, reply.error_type, reply.code)}
        self._send_json(reply.status, payload, headers)

    def _send_unexpected(self, recorded: RecordedRequest) -> None:
        if recorded.method != "POST" or not recorded.path.endswith(COMPLETIONS_SUFFIX):
            status, message = (
                404,
                (
                    f"scripted_openai: request #{recorded.number} {recorded.method} "
                    f"{recorded.path} is not served; only POST …{COMPLETIONS_SUFFIX} is"
                ),
            )
        else:
            status, message = (
                500,
                (
                    f"scripted_openai: script exhausted; unexpected request #{recorded.number} "
                    f"to {recorded.path} (no reply was queued for it)"
                ),
            )
        payload = {"error": error_object(message, "server_error", None)}
        self._send_json(status, payload, {"x-should-retry": "false"})
        self.close_connection = True

    def _send_sse(self, payloads: list[Any], number: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", f"req_scripted_{number:04d}")
        self.end_headers()
        for payload in payloads:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            self._write_chunk(f"data: {data}\n\n".encode())
        self._write_chunk(b"")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


class ScriptedOpenAI:
    """The scripted server. Use as a context manager, or call start() / stop()."""

    def __init__(self, *replies: Reply, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._lock = threading.Condition()
        self._queue: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedOpenAI:
        if self._httpd is not None:
            raise RuntimeError("the scripted server is already running")
        self._httpd = _HTTPServer(self, self._address)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"scripted-openai:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        httpd.shutdown()
        thread.join(timeout)
        with contextlib.suppress(OSError):
            httpd.server_close()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """Where the SDK points: requests go to ``<base_url>/chat/completions``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue more replies after those already queued."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

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
    def errors(self) -> list[BaseException]:
        """Exceptions raised in handler threads (should stay empty)."""
        with self._lock:
            return list(self._errors)

    def wait_for_requests(self, count: int, timeout: float = PATIENCE) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; AssertionError on timeout."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout):
                raise AssertionError(
                    f"expected {count} request(s) within {timeout}s, got {len(self._requests)}"
                )
            return list(self._requests)

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
            raise AssertionError("scripted OpenAI server: " + "; ".join(problems))

    # -- called from handler threads --

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any) -> RecordedRequest:
        with self._lock:
            reply = None
            if method == "POST" and path.endswith(COMPLETIONS_SUFFIX) and self._queue:
                reply = self._queue.popleft()
            recorded = RecordedRequest(
                number=len(self._requests) + 1,
                method=method,
                path=path,
                headers=headers,
                body=body,
                reply=reply,
            )
            self._requests.append(recorded)
            self._lock.notify_all()
            return recorded

    def _record_error(self, error: BaseException | None) -> None:
        if error is None or isinstance(error, ConnectionError):
            return  # the peer went away between requests: not a server failure
        with self._lock:
            self._errors.append(error)
