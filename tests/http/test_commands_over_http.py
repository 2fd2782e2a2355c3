"""Slash commands and usage over HTTP + SSE with the official client: the announcement
follows the answer that opened the session on the same stream."""

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block

from bootstrap.settings import Settings
from tests.e2e.conftest import RecordingClient
from tests.http.test_agent_over_http import agent_server, demo_settings, sdk_client
from tests.support.wire_validator import WireValidator

__all__ = ["demo_settings"]  # fixtures


def kinds(recorder: RecordingClient) -> list[str]:
    return [u.session_update for _, u in recorder.updates]


async def wait_for(recorder: RecordingClient, kind: str) -> Any:
    for _ in range(1000):
        found = [u for _, u in recorder.updates if u.session_update == kind]
        if found:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind} arrived; got {kinds(recorder)}")


async def test_commands_and_usage_over_http(demo_settings: Settings, workdir: Path) -> None:
    wire = WireValidator()
    recorder = RecordingClient()
    async with (
        agent_server(demo_settings) as base,
        sdk_client(base, wire, recorder) as (conn, _init),
    ):
        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        [listed] = await wait_for(recorder, "available_commands_update")
        await wait_for(recorder, "usage_update")
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("/help")])
    assert result.stop_reason == "end_turn"
    assert "help" in [c.name for c in listed.available_commands]
    assert "`/rename <title>`" in recorder.agent_text()
    assert {sid for sid, _ in recorder.updates} == {session.session_id}
    wire.assert_clean()
