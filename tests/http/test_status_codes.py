"""Every status code of `/acp` and the probes, against a real uvicorn server."""

import uuid

import httpx
import pytest

from tests.http.conftest import INITIALIZE, AcpHttp, FakeAgent, Serve

pytestmark = pytest.mark.integration


async def test_initialize_answers_200_with_the_response_and_a_connection_id(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        response = await http.post(f"{base}/acp", json=INITIALIZE)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert uuid.UUID(response.headers["acp-connection-id"]).version == 4
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
    }


async def test_a_replica_id_prefixes_every_connection_id(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    # A balancer in front of several replicas routes on that prefix (docs/deploy.md).
    async with serve_fake(replica_id="replica-b_2") as base:
        first = await http.post(f"{base}/acp", json=INITIALIZE)
        second = await http.post(f"{base}/acp", json=INITIALIZE)
        ids = [r.headers["acp-connection-id"] for r in (first, second)]
        deleted = await http.delete(f"{base}/acp", headers={"Acp-Connection-Id": ids[0]})
    prefixes, randoms = zip(*(i.split(".", 1) for i in ids), strict=True)
    assert prefixes == ("replica-b_2", "replica-b_2")
    assert [uuid.UUID(r).version for r in randoms] == [4, 4] and randoms[0] != randoms[1]
    assert deleted.json() == {"closed": ids[0]}  # the id is looked up whole


async def test_each_initialize_opens_a_new_connection(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        first = await http.post(f"{base}/acp", json=INITIALIZE)
        second = await http.post(f"{base}/acp", json=INITIALIZE)
    assert first.headers["acp-connection-id"] != second.headers["acp-connection-id"]


async def test_other_messages_are_accepted_with_202_and_an_empty_body(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        request = await client.post({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}})
        notification = await client.post({"jsonrpc": "2.0", "method": "hello"})
        stray_response = await client.post({"jsonrpc": "2.0", "id": 99, "result": {}})
    assert [request.status_code, notification.status_code, stray_response.status_code] == [
        202,
        202,
        202,
    ]
    assert request.content == b""


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "missing Acp-Connection-Id"),
        ({"Acp-Connection-Id": "not-a-connection"}, "unknown connection id"),
    ],
)
async def test_a_missing_or_unknown_connection_id_is_400(
    serve_fake: Serve, http: httpx.AsyncClient, headers: dict[str, str], expected: str
) -> None:
    async with serve_fake() as base:
        post = await http.post(
            f"{base}/acp", json={"jsonrpc": "2.0", "id": 1, "method": "echo"}, headers=headers
        )
        get = await http.get(f"{base}/acp", headers=headers)
        delete = await http.delete(f"{base}/acp", headers=headers)
    for response in (post, get, delete):
        assert response.status_code == 400
        assert expected in response.json()["error"]


async def test_a_body_that_is_not_json_is_400_with_a_json_rpc_parse_error(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        response = await http.post(
            f"{base}/acp", content=b"{not json", headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"[]", b"batches"),
        (b'[{"jsonrpc":"2.0","id":0,"method":"initialize"}]', b"batches"),
        (b"42", b"expected a JSON-RPC object"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', b"id must be"),
    ],
)
async def test_batches_and_non_objects_are_a_clear_400(
    serve_fake: Serve, http: httpx.AsyncClient, body: bytes, needle: bytes
) -> None:
    async with serve_fake() as base:
        response = await http.post(
            f"{base}/acp", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert needle in response.content


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_a_wrong_content_type_is_415(
    serve_fake: Serve, http: httpx.AsyncClient, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    async with serve_fake() as base:
        response = await http.post(f"{base}/acp", content=b"{}", headers=headers)
    assert response.status_code == 415


async def test_a_charset_parameter_is_fine(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    async with serve_fake() as base:
        response = await http.post(
            f"{base}/acp",
            content=httpx.Request("POST", "/", json=INITIALIZE).content,
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
    assert response.status_code == 200


async def test_a_body_over_the_limit_is_413_declared_or_streamed(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    big = b'{"pad":"' + b"x" * 2000 + b'"}'

    async def chunked():  # type: ignore[no-untyped-def]
        for start in range(0, len(big), 500):
            yield big[start : start + 500]

    async with serve_fake(max_body_bytes=1000) as base:
        declared = await http.post(
            f"{base}/acp", content=big, headers={"Content-Type": "application/json"}
        )
        streamed = await http.post(
            f"{base}/acp", content=chunked(), headers={"Content-Type": "application/json"}
        )
        fits = await http.post(f"{base}/acp", json=INITIALIZE)
    assert declared.status_code == 413
    assert streamed.status_code == 413
    assert fits.status_code == 200


async def test_the_default_body_limit_is_10_mib(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    async with serve_fake() as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        near = await client.post(
            {"jsonrpc": "2.0", "method": "pad", "params": {"x": "y" * (10 * 2**20 - 100)}}
        )
        over = await client.post(
            {"jsonrpc": "2.0", "method": "pad", "params": {"x": "y" * (10 * 2**20)}}
        )
    assert (near.status_code, over.status_code) == (202, 413)


async def test_initialize_not_answered_in_time_is_504(
    serve_fake: Serve, http: httpx.AsyncClient, fake_agent: FakeAgent
) -> None:
    fake_agent.initialize_hangs = True
    async with serve_fake(initialize_timeout_seconds=0.2) as base:
        response = await http.post(f"{base}/acp", json=INITIALIZE)
    assert response.status_code == 504
    assert "acp-connection-id" not in response.headers
    assert len(fake_agent.closed_peers) == 1


async def test_past_the_connection_cap_initialize_is_503(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(max_connections=2) as base:
        answers = [await http.post(f"{base}/acp", json=INITIALIZE) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 503]
    assert "acp-connection-id" not in answers[2].headers
    assert "too many open connections" in answers[2].json()["error"]


async def test_a_freed_slot_can_be_reused(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    async with serve_fake(max_connections=1) as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        refused = await http.post(f"{base}/acp", json=INITIALIZE)
        assert (await client.delete()).status_code == 200
        again = await http.post(f"{base}/acp", json=INITIALIZE)
    assert (refused.status_code, again.status_code) == (503, 200)
    assert refused.headers["retry-after"]


async def test_delete_answers_200_and_later_use_of_the_id_is_400(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = AcpHttp(http, f"{base}/acp")
        await client.initialize()
        deleted = await client.delete()
        post = await client.post({"jsonrpc": "2.0", "id": 1, "method": "echo"})
        get = await http.get(f"{base}/acp", headers={"Acp-Connection-Id": client.id or ""})
        again = await client.delete()
    assert deleted.status_code == 200
    assert deleted.json() == {"closed": client.id}
    for response in (post, get, again):
        assert response.status_code == 400
        assert "is closed: deleted by the client" in response.json()["error"]


async def test_other_methods_are_405(serve_fake: Serve, http: httpx.AsyncClient) -> None:
    async with serve_fake() as base:
        response = await http.put(f"{base}/acp", json=INITIALIZE)
    assert response.status_code == 405


async def test_probes_answer_without_a_token_and_reveal_nothing(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(token="s3cret") as base:
        health = await http.get(f"{base}/healthz")
        ready = await http.get(f"{base}/readyz")
        docs = [
            (await http.get(f"{base}{path}")).status_code for path in ("/docs", "/openapi.json")
        ]
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert docs == [404, 404]


async def test_readyz_is_503_when_the_check_fails_or_raises(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async def not_ready() -> bool:
        return False

    async def broken() -> bool:
        raise OSError("disk gone")

    async with serve_fake(ready=not_ready) as base:
        first = await http.get(f"{base}/readyz")
    async with serve_fake(ready=broken) as base:
        second = await http.get(f"{base}/readyz")
    for response in (first, second):
        assert response.status_code == 503
        assert response.json() == {"status": "unavailable", "error": "not ready"}
