"""The rest of the ACP v1 surface through the real process and the official client:
`$/cancel_request` and `logout` (which the SDK's client has no method for: sent through its
JSON-RPC connection, so they are validated on the wire like the rest)."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import DEMO, Agent, Spawn, until

pytestmark = pytest.mark.e2e

LONG_REQUEST = "plan a migration of the session store from SQLite to PostgreSQL"


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    return str(session.session_id)


def prompt_id(agent: Agent) -> Any:
    (request,) = [m for s, m in agent.raw if m.get("method") == "session/prompt"]
    return request["id"]


async def test_cancel_request_ends_a_running_prompt_as_cancelled(
    spawn: Spawn, workdir: Path
) -> None:
    # A slow pace: the reply takes many seconds, so the cancel lands mid-stream.
    async with spawn({**DEMO, "IAC_CODE_DEMO_PACE": "10"}) as agent:
        sid = await start(agent, workdir)
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block(LONG_REQUEST)])
        )
        await until(lambda: agent.client.agent_text() != "", agent)
        rpc = agent.conn._conn
        await rpc.send_notification("$/cancel_request", {"requestId": 4242})  # unknown: ignored
        await rpc.send_notification("$/cancel_request", {"requestId": prompt_id(agent)})
        result = await asyncio.wait_for(prompt, 30)
        # The session is idle again and takes the next prompt.
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
    assert result.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"


async def test_cancel_request_for_a_finished_request_is_ignored(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn(DEMO) as agent:
        sid = await start(agent, workdir)
        done = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        await agent.conn._conn.send_notification(
            "$/cancel_request", {"requestId": prompt_id(agent)}
        )
        listed = await agent.conn.list_sessions()  # still serving, nothing answered twice
    assert done.stop_reason == "end_turn"
    assert [s.session_id for s in listed.sessions] == [sid]


async def test_logout_is_advertised_and_answers_empty(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        init = await agent.initialize()
        assert init.agent_capabilities.auth.logout is not None
        assert await agent.conn._conn.send_request("logout", {}) == {}
        # The demo needs no key: sessions and prompts go on as before.
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        reply = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert reply.stop_reason == "end_turn"


async def test_logout_keeps_the_servers_own_key(spawn: Spawn, workdir: Path) -> None:
    """The key `authenticate` names is the server's (from its environment): logging out
    does not take it away, so prompts after logout still reach the model."""
    env = {"IAC_CODE_PROVIDER": "anthropic", "IAC_CODE_API_KEY": "sk-test"}
    async with spawn(env) as agent:
        init = await agent.initialize()
        assert init.agent_capabilities.auth.logout is not None
        assert await agent.conn.authenticate(method_id="api-key") is not None
        assert await agent.conn._conn.send_request("logout", {}) == {}
        assert await agent.conn._conn.send_request("logout", {}) == {}  # idempotent
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    assert session.session_id


async def test_after_logout_a_server_without_a_key_still_answers_auth_required(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn({"IAC_CODE_PROVIDER": "anthropic"}) as agent:
        await agent.initialize()
        with pytest.raises(RequestError) as before:
            await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert await agent.conn._conn.send_request("logout", {}) == {}
        with pytest.raises(RequestError) as after:
            await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    assert before.value.code == after.value.code == -32000
