"""Bearer token auth on `/acp`, and the structured access log that never holds the token."""

import json
import logging

import httpx
import pytest

from tests.http.conftest import INITIALIZE, AcpHttp, Serve

pytestmark = pytest.mark.integration

TOKEN = "tok-3f9a-very-secret"


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer"]
)
async def test_without_the_right_token_every_acp_request_is_401(
    serve_fake: Serve, http: httpx.AsyncClient, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    async with serve_fake(token=TOKEN) as base:
        answers = [
            await http.post(f"{base}/acp", json=INITIALIZE, headers=headers),
            await http.get(f"{base}/acp", headers={**headers, "Acp-Connection-Id": "x"}),
            await http.delete(f"{base}/acp", headers={**headers, "Acp-Connection-Id": "x"}),
        ]
    for response in answers:
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert TOKEN not in response.text


async def test_with_the_token_the_whole_flow_works(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(token=TOKEN) as base:
        client = AcpHttp(http, f"{base}/acp", headers={"Authorization": f"bearer {TOKEN}"})
        await client.initialize()
        async with client.stream() as stream:
            request_id = await client.request("echo", {"ok": True})
            reply = (await stream.next()).json()
        deleted = await client.delete()
    assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {"ok": True}}
    assert deleted.status_code == 200


async def test_without_a_token_configured_no_auth_is_needed(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(token=None) as base:
        response = await http.post(f"{base}/acp", json=INITIALIZE)
    assert response.status_code == 200


async def test_each_request_is_one_json_access_line_without_the_token(
    serve_fake: Serve, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with serve_fake(token=TOKEN) as base:
        client = AcpHttp(http, f"{base}/acp", headers={"Authorization": f"Bearer {TOKEN}"})
        await client.initialize()
        await client.request("echo", {})
        await http.post(f"{base}/acp", json=INITIALIZE, headers={"Authorization": "Bearer nope"})
        await client.delete()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "iac_code.http.access"]
    assert [(e["method"], e["status"], e["rpc"]) for e in lines] == [
        ("POST", 200, "initialize"),
        ("POST", 202, "echo"),
        ("POST", 401, None),
        ("DELETE", 200, None),
    ]
    assert lines[0]["connection"] == client.id
    assert all(e["path"] == "/acp" and e["ms"] >= 0 for e in lines)
    assert TOKEN not in caplog.text
    assert "nope" not in caplog.text
