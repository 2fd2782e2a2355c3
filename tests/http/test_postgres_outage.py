"""A replica that loses its PostgreSQL database says so and recovers by itself: /readyz
answers 503 and requests get a clear storage error while the database is away, and both are
well again once it is back, with no restart. The real server runs as a process; the database
is reached through a loopback proxy that the test cuts and restores (PostgreSQL stays up)."""

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.http.walkthrough import free_port, server_process
from tests.support.postgres import scratch_database
from tests.support.sse_client import SseStream, open_sse
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[tuple[str, TcpProxy]]:
    """The server's base URL, and the proxy between it and its database."""
    with scratch_database("outage") as url:
        real = make_url(url)
        with TcpProxy(real.host or "127.0.0.1", real.port or 5432) as proxy:
            proxied = real.set(host="127.0.0.1", port=proxy.port)
            env = {
                "PATH": os.environ["PATH"],
                "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
                "IAC_CODE_PROVIDER": "demo",
                "IAC_CODE_DEMO_PACE": "0",
                "IAC_CODE_DATABASE_URL": proxied.render_as_string(hide_password=False),
            }
            argv = ["acp", "--transport", "http", "--port", str(free_port())]
            with server_process(argv, env, tmp_path / "server.log") as (base, _):
                yield base, proxy


async def readiness_becomes(http: httpx.AsyncClient, status: int) -> None:
    deadline = time.monotonic() + 30
    while (await http.get("/readyz")).status_code != status:
        assert time.monotonic() < deadline, f"/readyz never answered {status}"
        await asyncio.sleep(0.05)


class Peer:
    """One ACP connection over HTTP: requests are POSTed, answers read from the stream."""

    def __init__(self, http: httpx.AsyncClient, headers: dict[str, str], stream: SseStream):
        self._http, self._headers, self._stream = http, headers, stream
        self._ids = iter(range(100, 10_000))

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        posted = await self._http.post("/acp", json=body, headers=self._headers)
        assert posted.status_code == 202, posted.text
        events = await self._stream.until(lambda e: e.json().get("id") == request_id, 30)
        answer: dict[str, Any] = events[-1].json()
        return answer


async def test_a_replica_reports_a_lost_database_and_recovers_without_a_restart(
    replica: tuple[str, TcpProxy], tmp_path: Path
) -> None:
    base, proxy = replica
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        await readiness_becomes(http, 200)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        opened = await http.post("/acp", json={**init, "params": {"protocolVersion": 1}})
        headers = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        async with open_sse(http, "/acp", headers) as stream:
            peer = Peer(http, headers, stream)
            new = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session_id = new["result"]["sessionId"]

            proxy.cut()
            await readiness_becomes(http, 503)
            listed = await peer.call("session/list", {})
            assert listed["error"]["code"] == -32603, listed
            assert listed["error"]["data"] == {"reason": "the database is unreachable"}
            refused = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            assert refused["error"]["code"] == -32603, refused
            assert refused["error"]["data"]["reason"] == "the database is unreachable"

            proxy.restore()
            await readiness_becomes(http, 200)
            listed = await peer.call("session/list", {})
            assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
            again = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            assert again["result"]["sessionId"] != session_id
