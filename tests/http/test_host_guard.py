"""DNS rebinding: a page whose name now resolves to 127.0.0.1 must not drive the agent."""

from urllib.parse import urlsplit

import httpx
import pytest

from adapters.http.host_guard import LOOPBACK_NAMES, HostGuard
from bootstrap.http_settings import load_http_config
from tests.http.conftest import INITIALIZE, Serve

pytestmark = pytest.mark.integration


async def post(http: httpx.AsyncClient, base: str, **headers: str) -> httpx.Response:
    return await http.post(f"{base}/acp", json=INITIALIZE, headers=headers)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
async def test_loopback_names_are_served(
    serve_fake: Serve, http: httpx.AsyncClient, host: str
) -> None:
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        port = urlsplit(base).port
        response = await post(http, base, Host=f"{host}:{port}")
    assert response.status_code == 200


async def test_a_rebound_host_name_is_refused(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        port = urlsplit(base).port
        response = await post(
            http, base, Host=f"attacker.example:{port}", Origin=f"http://attacker.example:{port}"
        )
        assert response.status_code == 403
        assert "attacker.example" in response.json()["error"]
        cross = await post(http, base, Origin="http://attacker.example")
        assert cross.status_code == 403
        local_page = await post(http, base, Origin="http://localhost:3000")
        assert local_page.status_code == 200
        # probes are guarded too: nothing answers for a foreign name
        health = await http.get(f"{base}/healthz", headers={"Host": "evil.example"})
        assert health.status_code == 403


async def test_any_host_when_unrestricted_but_origins_must_match(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(allowed_hosts=None) as base:
        assert (await post(http, base, Host="agent.internal")).status_code == 200
        same = await post(http, base, Host="agent.internal", Origin="https://agent.internal")
        assert same.status_code == 200
        other = await post(http, base, Host="agent.internal", Origin="https://elsewhere.example")
        assert other.status_code == 403


def test_allowed_hosts_come_from_the_environment() -> None:
    config = load_http_config(
        {"IAC_CODE_HTTP_ALLOWED_HOSTS": "Agent.Example, 10.0.0.5, agent.example.com:8443, [::1]"}
    )
    assert config.allowed_hosts == frozenset(
        {"agent.example", "10.0.0.5", "agent.example.com", "::1"}
    )
    assert load_http_config({}).allowed_hosts is None


async def test_malformed_host_or_origin_is_refused_not_a_crash(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        assert (await post(http, base, Origin="http://[::1")).status_code == 403
    async with serve_fake(allowed_hosts=None) as base:
        # unrestricted: served, and above all not a 500
        assert (await post(http, base, Host="[::1")).status_code == 200


async def test_a_websocket_handshake_is_refused_with_a_close_where_no_answer_can_be_sent() -> None:
    # Servers without ASGI's denial-response extension: closing before accepting is a 403.
    reached: list[object] = []
    sent: list[dict[str, object]] = []

    async def app(scope: object, receive: object, send: object) -> None:
        reached.append(scope)

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    guard = HostGuard(app, allowed=frozenset({"127.0.0.1"}))
    scope = {"type": "websocket", "headers": [(b"host", b"evil.example")], "extensions": {}}
    await guard(scope, None, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]
    assert reached == []
