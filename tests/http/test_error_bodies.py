"""One body shape for every HTTP error, and finding 8 (bad input answered 500 or a reset
connection instead of 400), against a real uvicorn server."""

from typing import Any

import httpx
import pytest

from adapters.http.app import create_app
from tests.http.conftest import FAST, INITIALIZE, AcpHttp, FakeAgent, Serve, always_ready, running

pytestmark = pytest.mark.integration

JSON = {"Content-Type": "application/json"}


def plain_error(response: httpx.Response) -> str:
    """`{"error": "<what went wrong>"}`: the shape of every error but a bad JSON-RPC body."""
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]
    return str(body["error"])


def rpc_error(response: httpx.Response) -> dict[str, Any]:
    """A bad body: the JSON-RPC error response, whose `error` is the JSON-RPC error."""
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert isinstance(body["error"]["code"], int) and body["error"]["message"]
    error: dict[str, Any] = body["error"]
    return error


async def test_http_errors_use_one_body_shape_for_403_and_405_too(
    serve_fake: Serve, http: httpx.AsyncClient, fake_agent: FakeAgent
) -> None:
    answers: dict[int, httpx.Response] = {}
    async with serve_fake(
        token="s3cret", max_connections=1, max_body_bytes=1000, allowed_hosts=None
    ) as base:
        auth = {"Authorization": "Bearer s3cret"}
        url = f"{base}/acp"
        answers[401] = await http.post(url, json=INITIALIZE)
        answers[404] = await http.get(f"{base}/nowhere", headers=auth)
        answers[405] = await http.put(url, json=INITIALIZE, headers=auth)
        answers[413] = await http.post(url, content=b" " * 2000, headers={**auth, **JSON})
        answers[415] = await http.post(url, content=b"{}", headers=auth)
        answers[400] = await http.post(url, json={"jsonrpc": "2.0", "method": "x"}, headers=auth)
        assert (await http.post(url, json=INITIALIZE, headers=auth)).status_code == 200
        answers[503] = await http.post(url, json=INITIALIZE, headers=auth)
        bad_bodies = [
            await http.post(url, content=body, headers={**auth, **JSON})
            for body in (b"{not json", b"[]", b"42", b'{"id":1.5e999,"x":NaN}')
        ]
    async with serve_fake(allowed_hosts=frozenset({"localhost"})) as base:
        answers[403] = await http.post(f"{base}/acp", json=INITIALIZE)
    fake_agent.initialize_hangs = True
    async with serve_fake(initialize_timeout_seconds=0.1) as base:
        answers[504] = await http.post(f"{base}/acp", json=INITIALIZE)

    for status, response in answers.items():
        assert response.status_code == status
        assert plain_error(response)
    assert answers[405].headers["allow"]
    assert answers[401].headers["www-authenticate"].startswith("Bearer")
    assert answers[503].headers["retry-after"]
    assert [rpc_error(r)["code"] for r in bad_bodies] == [-32700, -32600, -32600, -32700]


async def test_an_unexpected_failure_is_a_500_in_the_same_shape_without_details(
    fake_agent: FakeAgent, http: httpx.AsyncClient
) -> None:
    app = create_app(fake_agent, FAST, always_ready)

    def broken(connection_id: str | None) -> Any:
        raise RuntimeError("/secret/path/of/the/server went wrong")

    app.state.registry.get = broken
    async with running(app) as base:
        response = await http.get(f"{base}/acp", headers={"Acp-Connection-Id": "x"})
        still = await http.post(f"{base}/acp", json=INITIALIZE)
    assert response.status_code == 500
    assert plain_error(response) == "internal server error"
    assert still.status_code == 200


def nested(depth: int) -> bytes:
    inner = b"[" * depth + b"]" * depth
    return b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":' + inner + b"}}"


@pytest.mark.parametrize("depth", [200, 1000, 100_000])
async def test_finding_8_bodies_nested_1000_deep_are_a_400_parse_error(
    serve_fake: Serve, http: httpx.AsyncClient, depth: int
) -> None:
    async with serve_fake() as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        refused = await http.post(f"{base}/acp", content=nested(depth), headers=JSON)
        on_a_connection = await http.post(
            f"{base}/acp",
            content=nested(depth),
            headers={**JSON, "Acp-Connection-Id": client.id or ""},
        )
        still = await client.post({"jsonrpc": "2.0", "id": 1, "method": "echo"})
    for response in (refused, on_a_connection):
        error = rpc_error(response)
        assert error["code"] == -32700
        assert "nested more than 128 levels" in error["message"]
    assert still.status_code == 202


@pytest.mark.parametrize(
    "value",
    [b"\xb2", "²".encode(), b"\xd9\xa3", b"1\xb2", b"9" * 5000, b"-1", b"1e3", b"0x10"],
)
async def test_finding_8_a_non_ascii_last_event_id_is_400(
    serve_fake: Serve, http: httpx.AsyncClient, value: bytes
) -> None:
    async with serve_fake() as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        response = await http.get(
            f"{base}/acp", headers={"Acp-Connection-Id": client.id or "", "Last-Event-ID": value}
        )
        still = await client.post({"jsonrpc": "2.0", "id": 1, "method": "echo"})
    assert response.status_code == 400
    assert "Last-Event-ID must be the id of an event" in plain_error(response)
    assert still.status_code == 202


async def test_finding_8_odd_bytes_in_other_headers_are_answered_not_500(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        connection = await http.post(
            f"{base}/acp", json=INITIALIZE, headers={"Acp-Connection-Id": b"\xb2\xff"}
        )
        unknown = await http.get(f"{base}/acp", headers={"Acp-Connection-Id": b"\xb2" * 5000})
        session = await http.get(f"{base}/acp", headers={"Acp-Session-Id": b"\xb2"})
    assert connection.status_code == 200  # initialize ignores it
    assert unknown.status_code == 400 and len(plain_error(unknown)) < 200
    assert session.status_code == 400
