"""Finding 4 (issue 25): a token a client puts in a URL's query never reaches the log. The
real `iac-code acp --transport http` process, at its most verbose (DEBUG), is asked for
`/acp?token=...` over HTTP and WebSocket, accepted and refused; its stderr is read after."""

import asyncio
import os
from pathlib import Path

import httpx
import pytest

from adapters.http.log_redaction import redact
from tests.http.walkthrough import free_port, server_process
from tests.support.ws_client import open_raw

pytestmark = pytest.mark.e2e

TOKEN = "tok-7c1e-in-the-query"


async def knock(base: str) -> list[int]:
    """Every kind of request naming the token in its query; the statuses they got."""
    ws = base.replace("http://", "ws://")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    statuses = []
    for url, headers in (
        (f"{ws}/acp?token={TOKEN}", {}),  # refused: 401
        (f"{ws}/acp?token={TOKEN}", {**auth, "Origin": "http://evil.example"}),  # 403
        (f"{ws}/acp?token={TOKEN}&x=1", auth),  # accepted
    ):
        response, socket = await open_raw(url, headers)
        statuses.append(response.status_code)
        if socket is not None:
            socket.close()
    async with httpx.AsyncClient(timeout=30) as http:
        for answer in (
            await http.post(f"{base}/acp?token={TOKEN}", json={}),  # 401
            await http.get(f"{base}/acp?access_token={TOKEN}", headers=auth),  # 400
            await http.get(f"{base}/healthz?token={TOKEN}"),  # 200
        ):
            statuses.append(answer.status_code)
    return statuses


def test_finding_4_query_strings_never_reach_the_log(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(tmp_path),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_LOG_LEVEL": "DEBUG",
        "IACCODE_ACP_HTTP_TOKEN": TOKEN,
    }
    log = tmp_path / "server.log"
    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    with server_process(argv, env, log) as (base, _):
        statuses = asyncio.run(knock(base))
    text = log.read_text()
    assert statuses == [401, 403, 101, 401, 400, 200]
    assert '"WebSocket /acp?[redacted]" 401' in text  # the lines are written, without it
    assert '"WebSocket /acp?[redacted]" [accepted]' in text
    assert '"path": "/acp", "status": 401' in text
    assert TOKEN not in text


def test_finding_4_uvicorns_access_line_and_debug_headers_are_redacted_too() -> None:
    # The CLI turns uvicorn's access log off; the filter covers it should it be turned on.
    assert (
        redact(f'127.0.0.1:5 - "GET /acp?token={TOKEN} HTTP/1.1" 401')
        == '127.0.0.1:5 - "GET /acp?[redacted] HTTP/1.1" 401'
    )
    assert redact(f"< Authorization: Bearer {TOKEN}") == "< Authorization: [redacted]"
    assert redact("< cookie: s=1") == "< cookie: [redacted]"
    assert redact('"WebSocket /acp" [accepted]') == '"WebSocket /acp" [accepted]'
