"""Notices through the real process, with a client that advertises `session.notices` (raw
frames, each checked against the newest schema file): an MCP server that cannot start is an
error notice, not agent text. Without the capability the same failure stays agent text, as
tests/e2e/test_stdio_mcp.py checks."""

from pathlib import Path
from typing import Any

import pytest

from tests.support.raw_acp import NOTICES, raw_client

pytestmark = pytest.mark.e2e

MISSING = {"name": "missing", "command": "/no/such/mcp-server", "args": [], "env": []}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"IAC_CODE_CONFIG_DIR": str(tmp_path / "config"), "IAC_CODE_PROVIDER": "demo"}


async def test_an_mcp_server_that_cannot_start_is_an_error_notice(
    env: dict[str, str], workdir: Path
) -> None:
    async with raw_client(env, workdir) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": NOTICES})
        new = await client.call("session/new", {"cwd": str(workdir), "mcpServers": [MISSING]})
        sid = new["result"]["sessionId"]
        while not client.notices():
            await client.next_message()
        await client.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )

    [notice] = client.notices()
    assert notice["severity"] == "error"
    assert notice["title"] == "MCP server 'missing' failed"
    assert notice["description"]
    assert notice["_meta"]["iac_code"]["mcpServer"] == {"name": "missing", "status": "failed"}
    texts = [
        u["content"]["text"]
        for u in client.updates()
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert not any("MCP server 'missing' failed" in t for t in texts)
    assert texts  # the demo model answered the prompt as text


async def test_a_notice_goes_only_to_clients_that_take_it(
    env: dict[str, str], workdir: Path
) -> None:
    plain: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}}
    async with raw_client(env, workdir) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": plain})
        await client.call("session/new", {"cwd": str(workdir), "mcpServers": [MISSING]})
        while not any(u["sessionUpdate"] == "agent_message_chunk" for u in client.updates()):
            await client.next_message()

    assert client.notices() == []
    [said] = [u for u in client.updates() if u["sessionUpdate"] == "agent_message_chunk"]
    assert said["content"]["text"].startswith("MCP server 'missing' failed: ")
