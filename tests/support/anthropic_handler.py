"""The HTTP side of a scripted Anthropic server: the threaded server that tracks its
connections, and the handler that answers each request with the next scripted reply."""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from tests.support.anthropic_replies import ErrorReply, RawSSE, StreamReply, error_body, http_error
from tests.support.anthropic_requests import RecordedRequest, sent_key, with_usage

if TYPE_CHECKING:
    from tests.support.scripted_anthropic import ScriptedAnthropic

MESSAGES_PATH: Final = "/v1/messages"
MODELS_PATH: Final = "/v1/models"  # served once `accept_keys` named the keys it takes
_POLL_SECONDS: Final = 0.02


class _Disconnected(Exception):
    pass


class _Stopped(Exception):
    pass


class ScriptHTTPServer(ThreadingHTTPServer):
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
    server: ScriptHTTPServer

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
            self._send_models(sent_key(headers) in owner._keys)
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
                        events = with_usage(events, recorded.usage)
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
        payload = error_body(reply.error_type, reply.message)
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
        payload = error_body(error_type, message)
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
