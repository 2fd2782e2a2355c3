"""DNS rebinding: a page whose name now resolves to 127.0.0.1 must not drive the agent."""

import json
from urllib.parse import urlsplit

import httpx
import pytest

from adapters.http.host_guard import LOOPBACK_NAMES, HostGuard
from bootstrap.http_settings import load_http_config
from bootstrap.settings import SettingsError
from tests.http.conftest import INITIALIZE, Serve
from tests.support.ws_client import open_raw

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
        # another port is another origin (finding 1 of issue 25): IAC_CODE_HTTP_ALLOWED_ORIGINS
        local_page = await post(http, base, Origin="http://localhost:3000")
        assert local_page.status_code == 403
        # probes are guarded too: nothing answers for a foreign name
        health = await http.get(f"{base}/healthz", headers={"Host": "evil.example"})
        assert health.status_code == 403


async def test_any_host_when_unrestricted_but_origins_must_match(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(allowed_hosts=None) as base:
        assert (await post(http, base, Host="agent.internal")).status_code == 200
        same = await post(http, base, Host="agent.internal", Origin="http://agent.internal")
        assert same.status_code == 200
        # served over http: an https page is another origin (unless a trusted proxy says
        # X-Forwarded-Proto: https, or it is listed in IAC_CODE_HTTP_ALLOWED_ORIGINS)
        https = await post(http, base, Host="agent.internal", Origin="https://agent.internal")
        assert https.status_code == 403
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


# ---- finding 1 (issue 25): Origin must be the server's own, exactly ----------------------


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/acp"


async def test_finding_1_origin_null_is_refused(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    # A sandboxed iframe on any page sends `Origin: null`: on a loopback server without a
    # token (the default) it could otherwise drive the agent.
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        answer = await post(http, base, Origin="null")
        refused, socket = await open_raw(ws_url(base), {"Origin": "null"})
    assert answer.status_code == 403
    assert "'null'" in answer.json()["error"]
    assert socket is None and refused.status_code == 403
    assert "'null'" in json.loads(refused.body)["error"]


async def test_finding_1_an_origin_on_another_port_is_refused(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        port = urlsplit(base).port
        other = f"http://127.0.0.1:{port + 1 if port != 65535 else 1}"
        answers = [
            await post(http, base, Origin=other),
            await post(http, base, Origin="http://localhost:3000"),
            await post(http, base, Origin=f"https://127.0.0.1:{port}"),  # another scheme
            await post(http, base, Origin=f"http://localhost:{port}"),  # another name
        ]
        refused, socket = await open_raw(ws_url(base), {"Origin": other})
    assert [a.status_code for a in answers] == [403] * 4
    error = answers[0].json()["error"]
    assert other in error and f"http://127.0.0.1:{port}" in error
    assert "IAC_CODE_HTTP_ALLOWED_ORIGINS" in error
    assert socket is None and refused.status_code == 403


async def test_finding_1_the_servers_own_origin_and_no_origin_are_served(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES) as base:
        port = urlsplit(base).port
        no_origin = await post(http, base)
        own = await post(http, base, Origin=base)
        own_by_name = await post(
            http, base, Host=f"localhost:{port}", Origin=f"http://LOCALHOST:{port}"
        )
        _, socket = await open_raw(ws_url(base), {"Origin": base})
        assert socket is not None
        socket.close()
    assert [no_origin.status_code, own.status_code, own_by_name.status_code] == [200] * 3


async def test_finding_1_default_ports_are_normalised(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    # Behind a proxy on port 80 the Host has no port, and Origin may or may not name it.
    async with serve_fake(allowed_hosts=None) as base:
        plain = await post(http, base, Host="agent.example", Origin="http://agent.example")
        explicit = await post(http, base, Host="agent.example:80", Origin="http://agent.example")
        named = await post(http, base, Host="agent.example", Origin="http://agent.example:80")
        wrong = await post(http, base, Host="agent.example", Origin="http://agent.example:8080")
    assert [plain.status_code, explicit.status_code, named.status_code] == [200] * 3
    assert wrong.status_code == 403


async def test_finding_1_allowed_origins_are_served_on_both_transports(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    allowed = frozenset({"http://localhost:3000", "https://app.example:443"})
    async with serve_fake(allowed_hosts=LOOPBACK_NAMES, allowed_origins=allowed) as base:
        listed = await post(http, base, Origin="http://localhost:3000")
        https = await post(http, base, Origin="https://app.example")
        unlisted = await post(http, base, Origin="http://localhost:3001")
        null = await post(http, base, Origin="null")
        _, socket = await open_raw(ws_url(base), {"Origin": "http://localhost:3000"})
        assert socket is not None
        socket.close()
    assert [listed.status_code, https.status_code] == [200, 200]
    assert [unlisted.status_code, null.status_code] == [403, 403]


def test_finding_1_allowed_origins_come_from_the_environment() -> None:
    config = load_http_config(
        {
            "IAC_CODE_HTTP_ALLOWED_ORIGINS": "http://LocalHost:3000, https://app.example, http://[::1]:80"
        }
    )
    assert config.allowed_origins == frozenset(
        {"http://localhost:3000", "https://app.example:443", "http://[::1]:80"}
    )
    assert load_http_config({}).allowed_origins == frozenset()
    for bad in (
        "null",
        "*",
        "app.example",
        "http://app.example/path",
        "ftp://app.example",
        "http://a:x",
    ):
        with pytest.raises(SettingsError, match="IAC_CODE_HTTP_ALLOWED_ORIGINS"):
            load_http_config({"IAC_CODE_HTTP_ALLOWED_ORIGINS": bad})
