"""Finding 5: connections that are never used expire quickly, an errored `initialize` holds
no slot, and the cap answers 503 only while really full. Time is a clock of the test's, and
the reaper's step is called directly: nothing here waits for the wall clock."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from adapters.http.app import create_app
from adapters.http.registry import ConnectionRegistry
from tests.http.conftest import FAST, INITIALIZE, AcpHttp, FakeAgent, always_ready, running

pytestmark = pytest.mark.integration


@dataclass
class Clock:
    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@asynccontextmanager
async def served(agent: FakeAgent, clock: Clock, **changes: Any) -> AsyncIterator[FastAPI]:
    """The app on a real server; the background reaper never runs within a test (an hour
    apart), so only the test's own `reap()` calls reap."""
    config = replace(FAST, reap_interval_seconds=3_600, **changes)
    app = create_app(agent, config, always_ready, clock)
    async with running(app) as base:
        app.state.base = base
        yield app


def registry(app: FastAPI) -> ConnectionRegistry:
    registry: ConnectionRegistry = app.state.registry
    return registry


async def connect(http: httpx.AsyncClient, app: FastAPI) -> AcpHttp:
    client = AcpHttp(http, f"{app.state.base}/acp")
    await client.initialize()
    return client


async def still_open(client: AcpHttp) -> bool:
    response = await client.post({"jsonrpc": "2.0", "method": "ping"})  # marks it used
    return response.status_code == 202


async def test_finding_5_connections_that_never_open_a_stream_or_send_a_request_expire_quickly(
    fake_agent: FakeAgent, http: httpx.AsyncClient
) -> None:
    clock = Clock()
    async with served(fake_agent, clock) as app:
        unused = await connect(http, app)
        used = await connect(http, app)
        assert (await used.post({"jsonrpc": "2.0", "method": "hello"})).status_code == 202
        clock.advance(59)
        assert await registry(app).reap() == 0
        clock.advance(2)  # 61 s: past the unused timeout (60 s), far from the idle one
        assert await registry(app).reap() == 1
        gone = await unused.post({"jsonrpc": "2.0", "method": "hello"})
        assert await still_open(used)
    assert gone.status_code == 400
    assert "unused after initialize for more than 60 s" in gone.json()["error"]


async def test_finding_5_connections_in_use_keep_the_general_idle_timeout(
    fake_agent: FakeAgent, http: httpx.AsyncClient
) -> None:
    clock = Clock()
    async with served(fake_agent, clock, idle_timeout_seconds=600) as app:
        idle = await connect(http, app)
        watched = await connect(http, app)
        assert await still_open(idle)
        async with watched.stream() as stream:
            clock.advance(601)
            assert await registry(app).reap() == 1  # the idle one; a stream keeps the other
            request_id = await watched.request("echo", {})
            await stream.until(lambda e: e.json().get("id") == request_id)
        gone = await idle.post({"jsonrpc": "2.0", "method": "hello"})
        closed = len(fake_agent.closed_peers)
    assert gone.status_code == 400
    assert "idle for more than 600 s" in gone.json()["error"]
    assert closed == 1


async def test_finding_5_an_errored_initialize_holds_no_slot(
    fake_agent: FakeAgent, http: httpx.AsyncClient
) -> None:
    clock = Clock()
    fake_agent.initialize_fails = True
    async with served(fake_agent, clock, max_connections=1) as app:
        url = f"{app.state.base}/acp"
        failed = [await http.post(url, json=INITIALIZE) for _ in range(3)]
        fake_agent.initialize_fails = False
        opened = await http.post(url, json=INITIALIZE)
        closed = len(fake_agent.closed_peers)
    for response in failed:
        assert response.status_code == 200  # the JSON-RPC answer, as for any initialize
        assert response.json()["error"]["code"] == -32602
        assert "acp-connection-id" not in response.headers
    assert opened.status_code == 200 and opened.headers["acp-connection-id"]
    assert closed == 3


async def test_finding_5_100_idle_http_connections_do_not_lock_everyone_out(
    fake_agent: FakeAgent, http: httpx.AsyncClient
) -> None:
    """The cap (100 by default) answers 503 with Retry-After only while really full: once
    the idle ones have expired, the next initialize takes a slot, reaper or not."""
    clock = Clock()
    async with served(fake_agent, clock, max_connections=100) as app:
        url = f"{app.state.base}/acp"
        idle = [await http.post(url, json=INITIALIZE) for _ in range(100)]
        clock.advance(20)
        full = await http.post(url, json=INITIALIZE)
        clock.advance(41)  # 61 s: every idle connection has expired, none reaped yet
        admitted = await http.post(url, json=INITIALIZE)
        first = AcpHttp(http, url, id=idle[0].headers["acp-connection-id"])
        expired = await first.post({"jsonrpc": "2.0", "method": "hello"})
    assert {r.status_code for r in idle} == {200}
    assert full.status_code == 503
    assert full.headers["retry-after"] == "40"  # when the first idle connection expires
    assert "too many open connections (100)" in full.json()["error"]
    assert admitted.status_code == 200
    assert expired.status_code == 400
    assert "unused after initialize" in expired.json()["error"]


def test_finding_5_the_unused_timeout_is_a_setting() -> None:
    from bootstrap.http_settings import load_http_config

    assert load_http_config({}).unused_timeout_seconds == 60
    config = load_http_config({"IAC_CODE_HTTP_UNUSED_TIMEOUT_SECONDS": "8"})
    assert (config.unused_timeout_seconds, config.idle_timeout_seconds) == (8, 3600)
    assert config.reap_interval_seconds == 2  # often enough for the shorter timeout
