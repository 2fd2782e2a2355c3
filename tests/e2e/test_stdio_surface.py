"""The rest of the ACP v1 surface through the real process and the official client:
`$/cancel_request` and `logout` (which the SDK's client has no method for: sent through its
JSON-RPC connection, so they are validated on the wire like the rest)."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import DEMO, Agent, Spawn, anthropic_env, until
from tests.e2e.test_stdio_history import updates_before_answer
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, thinking, tool_use

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


def _fold(updates: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    """A tool call as a client shows it: each update's fields replace the earlier ones."""
    shown: dict[str, Any] = {}
    for update in updates:
        if update.get("toolCallId") == call_id:
            shown.update({k: v for k, v in update.items() if k != "sessionUpdate"})
    return shown


def _chunk_ids(updates: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, messageId) of each run of chunks, in order."""
    runs: list[tuple[str, str]] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind.endswith("_chunk"):
            run = (kind, update["messageId"])
            if not runs or runs[-1] != run:
                runs.append(run)
    return runs


async def test_message_ids_and_the_early_tool_call_are_the_same_live_and_on_load(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "a.txt").write_text("contents of a\n")
    server.script(
        stream(
            thinking("Let me read it.", signature="sig-1"),
            text("Reading."),
            tool_use("read_file", {"path": "a.txt"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(text("The file says: contents of a")),
    )
    env = anthropic_env(server)
    async with spawn(env) as first:
        await first.initialize()
        sid = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await first.conn.prompt(session_id=sid, prompt=[text_block("Read a.txt please")])
        live = updates_before_answer(first, "session/prompt")
    async with spawn(env) as second:
        await second.initialize()
        await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        replay = updates_before_answer(second, "session/load")

    # One id per message, on every chunk of it, the same live and replayed.
    live_runs, replay_runs = _chunk_ids(live), _chunk_ids(replay)
    assert [kind for kind, _ in live_runs] == [
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
    ]
    assert live_runs[0][1] == live_runs[1][1] != live_runs[2][1]  # two model messages
    (user_run, *agent_runs) = replay_runs
    assert user_run[0] == "user_message_chunk" and user_run[1] not in dict(live_runs).values()
    assert agent_runs == live_runs

    # The call is shown as the model starts it (before the message's usage report), with
    # no input yet; one update fills it in; it is never shown twice.
    turn = live[[u["sessionUpdate"] for u in live].index("agent_thought_chunk") :]
    kinds = [u["sessionUpdate"] for u in turn]
    assert kinds.count("tool_call") == 1
    started = turn[kinds.index("tool_call")]
    assert kinds.index("tool_call") < kinds.index("usage_update")
    assert started == {
        "sessionUpdate": "tool_call",
        "toolCallId": "toolu_a",
        "title": "read_file",
        "name": "read_file",  # the tool's stable name, which the title later leaves
        "kind": "read",
        "status": "pending",
    }
    filled = next(u for u in live if u["sessionUpdate"] == "tool_call_update")
    assert filled["rawInput"] == {"path": "a.txt"} and filled["title"] == "Read a.txt"
    assert filled["locations"] == [{"path": str(workdir / "a.txt")}]
    # What the client ends up showing is what a load shows.
    assert _fold(live, "toolu_a") == _fold(replay, "toolu_a")
    assert _fold(replay, "toolu_a")["status"] == "completed"
