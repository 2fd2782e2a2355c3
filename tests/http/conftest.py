"""A real uvicorn server on 127.0.0.1 (a free port per test, in the test's event loop), and
a small client speaking the transport: POST / GET (SSE) / DELETE /acp."""

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from adapters.http.app import create_app
from adapters.http.config import HttpConfig
from adapters.http.slow_clients import uvicorn_options
from adapters.http.websocket_protocol import websocket_options
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from tests.support.patience import PATIENCE
from tests.support.sse_client import SseStream, open_sse
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

# Fast timings: keepalives and reaping are observable within a test.
FAST = HttpConfig(keepalive_seconds=0.2, reap_interval_seconds=0.05, retry_ms=1500)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


async def always_ready() -> bool:
    return True


async def start(
    app: FastAPI,
    header_timeout_seconds: float = FAST.header_timeout_seconds,
    websocket: HttpConfig | None = None,
) -> tuple[uvicorn.Server, "asyncio.Task[None]", str]:
    """Serve `app` with uvicorn on 127.0.0.1 and a port the OS picks, with the server's own
    protocol options (WebSocket's too, from the config given as `websocket`)."""
    options = uvicorn_options(header_timeout_seconds)
    if websocket is not None:
        options |= websocket_options(websocket)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_config=None,
        access_log=False,
        **options,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise AssertionError("uvicorn stopped before it started")
        await asyncio.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, task, f"http://127.0.0.1:{port}"


@asynccontextmanager
async def running(
    app: FastAPI,
    header_timeout_seconds: float = FAST.header_timeout_seconds,
    websocket: HttpConfig | None = None,
) -> AsyncIterator[str]:
    """The base URL of `app` served for the block."""
    server, task, base = await start(app, header_timeout_seconds, websocket)
    try:
        yield base
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, PATIENCE)


def permission_request(question: dict[str, Any]) -> dict[str, Any]:
    return {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "call_1", "title": "Write a file", "rawInput": question},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
        ],
    }


class FakeAgent(Dispatcher):
    """A dispatcher with a few test methods, to exercise the transport on its own.

    - `echo` answers its params; `stream` sends `count` notifications, then answers;
    - `ask` calls the client (session/request_permission) and answers the client's result;
    - `hang` answers once its connection closes; `initialize` answers a canned result, or hangs
      when `initialize_hangs` is set, or answers an error when `initialize_fails` is.
    """

    def __init__(self) -> None:
        self.closed_peers: list[Connection] = []
        self.cancelled = asyncio.Event()
        self.stop = asyncio.Event()
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.initialize_hangs = False
        self.initialize_fails = False
        self.notifications: list[tuple[str, Any]] = []

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        params = params or {}
        match method:
            case "initialize":
                if self.initialize_hangs:
                    await asyncio.Event().wait()
                if self.initialize_fails:
                    raise RpcError(-32602, "Invalid params: protocolVersion is required")
                return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
            case "echo":
                return params
            case "stream":
                for n in range(params.get("count", 3)):
                    if params.get("gate") == n:
                        self.started.set()
                        await self.release.wait()
                    await peer.send_notification("tick", {"n": n, "pad": params.get("pad", "")})
                return {"sent": params.get("count", 3)}
            case "ask" | "_ask":  # `_ask`: the SDK client's ext_method("ask")
                return await peer.call("session/request_permission", permission_request(params))
            case "hang":  # until the connection closes, like a prompt
                self.started.set()
                await self.stop.wait()
                self.cancelled.set()
                return {"stopReason": "cancelled"}
            case _:
                raise RpcError(-32601, f"Method not found: {method}")

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        self.notifications.append((method, params))

    async def peer_closed(self, peer: Connection) -> None:
        self.closed_peers.append(peer)
        self.stop.set()


@dataclass
class AcpHttp:
    """A client of the transport. `id` is the connection id once initialized."""

    http: httpx.AsyncClient
    url: str
    id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    next_id: int = 1
    wire: WireValidator | None = None

    async def initialize(self, message: dict[str, Any] | None = None) -> dict[str, Any]:
        message = message or INITIALIZE
        self._check(CLIENT, message)
        response = await self.http.post(self.url, json=message, headers=self.headers)
        assert response.status_code == 200, response.text
        self.id = response.headers["acp-connection-id"]
        self._check(AGENT, response.json())
        return response.json()

    async def post(self, message: dict[str, Any], **headers: str) -> httpx.Response:
        self._check(CLIENT, message)
        return await self.http.post(self.url, json=message, headers=self._headers(headers))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """POST a request (202 expected); returns its id."""
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        response = await self.post(message)
        assert response.status_code == 202, response.text
        return request_id

    async def delete(self) -> httpx.Response:
        return await self.http.delete(self.url, headers=self._headers({}))

    def stream(
        self, last_event_id: int | str | None = None, **headers: str
    ) -> AbstractAsyncContextManager[SseStream]:
        extra = dict(headers)
        if last_event_id is not None:
            extra["Last-Event-ID"] = str(last_event_id)
        return open_sse(self.http, self.url, self._headers(extra))

    def received(self, events: list[Any]) -> list[dict[str, Any]]:
        """The JSON-RPC messages of `message` events (validated when a wire is set)."""
        messages = [e.json() for e in events if e.event == "message"]
        for message in messages:
            self._check(AGENT, message)
        return messages

    def _headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = {**self.headers, **extra}
        if self.id is not None:
            headers.setdefault("Acp-Connection-Id", self.id)
        return {k.replace("_", "-"): v for k, v in headers.items()}

    def _check(self, sender: str, message: dict[str, Any]) -> None:
        if self.wire is not None:
            self.wire.check(sender, json.loads(json.dumps(message)))


Serve = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def fake_agent() -> FakeAgent:
    return FakeAgent()


@pytest.fixture
def serve_fake(fake_agent: FakeAgent) -> Serve:
    """`async with serve_fake(**config_changes) as url:` runs the app over the fake agent
    (with `clock=`, a clock of the test's for the connections' timeouts)."""

    @asynccontextmanager
    async def serve(
        ready: Callable[[], Awaitable[bool]] = always_ready,
        clock: Callable[[], float] = time.monotonic,
        **changes: Any,
    ) -> AsyncIterator[str]:
        config = replace(FAST, **changes)
        app = create_app(fake_agent, config, ready, clock)
        async with running(app, config.header_timeout_seconds, config) as base:
            yield base

    return serve


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as client:
        yield client


def message_events(events: list[Any]) -> list[dict[str, Any]]:
    return [e.json() for e in events if e.event == "message"]
