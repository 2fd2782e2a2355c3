"""The official SDK's WebSocket client (`acp.ws.create_websocket_stream`) against the real
agent (container, SQLite, models) on GET /acp, every message on the wire validated against
the SDK's schemas; and against the real `iac-code acp --transport http` process."""

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import websockets
from acp import text_block
from acp.connection import StreamDirection, StreamEvent
from acp.ws import create_websocket_stream

from adapters.http.app import create_app
from bootstrap.container import release
from bootstrap.http import build_agent, database_ready
from bootstrap.settings import Settings
from tests.e2e.conftest import RecordingClient
from tests.http.conftest import FAST, running
from tests.http.test_agent_over_http import anthropic_settings
from tests.http.walkthrough import free_port, server_process
from tests.support.official_ws import official_on_websocket
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.integration


@asynccontextmanager
async def agent_on_websocket(settings: Settings) -> AsyncIterator[str]:
    """The real agent served with the WebSocket transport; yields its ws:// URL."""
    dispatcher, container = build_agent(settings)
    try:
        app = create_app(dispatcher, FAST, database_ready(settings.database_url))
        async with running(app, websocket=FAST) as base:
            yield base.replace("http://", "ws://") + "/acp"
    finally:
        await release(container)


@asynccontextmanager
async def sdk_over_websocket(
    url: str, wire: WireValidator, recorder: RecordingClient, **headers: str
) -> AsyncIterator[tuple[Any, Any]]:
    """The official client on a WebSocket, initialized, every message checked by `wire`;
    yields the connection and the `initialize` answer."""

    def observe(event: StreamEvent) -> None:
        sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
        wire.check(sender, json.loads(json.dumps(event.message)))

    async with official_on_websocket(
        url, recorder, name="sdk-ws", headers=headers, observe=observe
    ) as opened:
        yield opened


async def test_the_official_websocket_client_prompts_answers_a_permission_and_cancels(
    tmp_path: Path, workdir: Path
) -> None:
    pieces = [f"piece {n} " for n in range(20)]
    write = tool_use("write_file", {"path": "a.txt", "content": "one"}, id="toolu_ws1")
    script = (
        stream(write, stop_reason="tool_use"),
        stream(text(*pieces)),
        stream(text("thinking it over"), HANG),
    )
    wire = WireValidator()
    with ScriptedAnthropic(*script) as model:
        async with agent_on_websocket(anthropic_settings(tmp_path, model)) as url:
            recorder = RecordingClient(answers=["allow_once"])
            async with sdk_over_websocket(url, wire, recorder) as (conn, init):
                session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
                done = await conn.prompt(
                    session_id=session.session_id, prompt=[text_block("write, then talk")]
                )
                hanging = asyncio.ensure_future(
                    conn.prompt(session_id=session.session_id, prompt=[text_block("and?")])
                )
                await asyncio.to_thread(model.wait_for_hang)
                await conn.cancel(session_id=session.session_id)
                cancelled = await asyncio.wait_for(hanging, PATIENCE)
        model.assert_script_consumed()
    assert init.agent_info.name == "iac-code"
    assert done.stop_reason == "end_turn"
    [(asked, _options)] = recorder.permission_requests  # the round trip, on the socket
    assert asked.tool_call_id == "toolu_ws1"
    assert (workdir / "a.txt").read_text() == "one"
    assert recorder.agent_text().startswith("".join(pieces))  # every chunk once, in order
    assert cancelled.stop_reason == "cancelled"
    assert {sid for sid, _ in recorder.updates} == {session.session_id}
    wire.assert_clean()


def server_env(config_dir: Path, token: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "IAC_CODE_CONFIG_DIR": str(config_dir),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
        "IACCODE_ACP_HTTP_TOKEN": token,
        "IAC_CODE_WS_PING_INTERVAL_SECONDS": "0.1",
    }


@pytest.mark.e2e
async def test_the_server_process_serves_websockets_and_says_1001_when_it_stops(
    tmp_path: Path, workdir: Path
) -> None:
    token = "ws-token-0123456789"
    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    wire = WireValidator()
    with server_process(argv, server_env(tmp_path / "data", token), tmp_path / "log") as (
        base,
        process,
    ):
        url = base.replace("http://", "ws://") + "/acp"
        with pytest.raises(websockets.InvalidStatus) as refused:
            await create_websocket_stream(url)
        recorder = RecordingClient()
        headers = {"Authorization": f"Bearer {token}"}
        async with sdk_over_websocket(url, wire, recorder, **headers) as (conn, _):
            session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(session_id=session.session_id, prompt=[text_block("Hi")])
        async with websockets.connect(url, additional_headers=headers) as raw:
            pong = await raw.ping()
            await asyncio.wait_for(pong, PATIENCE)
            process.send_signal(signal.SIGTERM)
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(raw.recv(), 15)
            close = raw.close_code, raw.close_reason
    assert refused.value.response.status_code == 401
    assert result.stop_reason == "end_turn"
    assert "You said: Hi" in recorder.agent_text()
    assert close == (1001, "the server is shutting down")
    assert "Traceback" not in (tmp_path / "log").read_text()
    wire.assert_clean()
