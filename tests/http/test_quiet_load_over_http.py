"""acp-tck's ACP-LOAD-002 over HTTP+SSE and over WebSocket, with the official client, and
with a second client attaching to a session another one follows: everything a
`session/load` sends comes before its response, and for a quiet second after it neither
client gets an update of that session (the attaching client's replay and announce are its
own; the one already there is told nothing)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from acp import text_block

from bootstrap.settings import Settings
from tests.e2e.conftest import RecordingClient
from tests.e2e.test_stdio_quiet_load import QUIET_SECONDS, Traffic, updates_around_answer
from tests.http.test_agent_over_http import agent_server, sdk_client
from tests.http.test_websocket_agent import agent_on_websocket, sdk_over_websocket
from tests.support.wire_validator import WireValidator

pytestmark = pytest.mark.integration

Transport = Literal["http", "websocket"]


@dataclass
class RecordingWire(WireValidator):
    """Validates as WireValidator does, and keeps the traffic in the order seen."""

    seen: Traffic = field(default_factory=list)

    def check(self, sender: str, message: Any) -> None:
        self.seen.append((sender, message))
        super().check(sender, message)


@asynccontextmanager
async def served(transport: Transport, tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings(
        provider="demo",
        demo_pace=0.0,
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}",
    )
    serve = agent_server if transport == "http" else agent_on_websocket
    async with serve(settings) as url:
        yield url


def client(
    transport: Transport, url: str, wire: WireValidator, recorder: RecordingClient
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    if transport == "http":
        return sdk_client(url, wire, recorder)
    return sdk_over_websocket(url, wire, recorder)


def updates_after(wire: RecordingWire, mark: int, session_id: str) -> list[Any]:
    return [
        m["params"]["update"]["sessionUpdate"]
        for _, m in wire.seen[mark:]
        if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
    ]


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_a_second_client_loads_a_followed_session_and_then_all_is_quiet(
    transport: Transport, tmp_path: Path, workdir: Path
) -> None:
    first_wire, second_wire = RecordingWire(), RecordingWire()
    async with (
        served(transport, tmp_path) as url,
        client(transport, url, first_wire, RecordingClient()) as (first, _),
    ):
        session = await first.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        done = await first.prompt(session_id=sid, prompt=[text_block("hello")])
        assert done.stop_reason == "end_turn"
        async with client(transport, url, second_wire, RecordingClient()) as (second, _):
            first_mark = len(first_wire.seen)
            await second.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
            await asyncio.sleep(QUIET_SECONDS)
            before, after = updates_around_answer(second_wire.seen, "session/load")
            followed = updates_after(first_wire, first_mark, sid)
    shown = [u["update"]["sessionUpdate"] for u in before]
    assert shown[0] == "user_message_chunk" and "agent_message_chunk" in shown  # the replay
    assert shown[-2:] == ["available_commands_update", "usage_update"]  # then the announce
    assert after == []
    assert followed == []  # the second client's attach is not the first one's news
    first_wire.assert_clean()
    second_wire.assert_clean()


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_nothing_follows_a_resume_response(
    transport: Transport, tmp_path: Path, workdir: Path
) -> None:
    wire = RecordingWire()
    async with (
        served(transport, tmp_path) as url,
        client(transport, url, wire, RecordingClient()) as (conn, _),
    ):
        sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        await conn.close_session(session_id=sid)
        await conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        await asyncio.sleep(QUIET_SECONDS)
        before, after = updates_around_answer(wire.seen, "session/resume")
    assert [u["update"]["sessionUpdate"] for u in before] == [
        "available_commands_update",
        "usage_update",
    ]
    assert after == []
    wire.assert_clean()
