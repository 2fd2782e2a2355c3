"""What acp-tck's ACP-LOAD-002 checks, through the real process and the official client:
the response to `session/load` (and `session/resume`) comes after everything the request
sends (the replay, the commands, the context usage), and nothing for that session follows
it until something new happens. `session/fork` names a session the client learns from its
response: its announce follows the response, and the source session stays quiet."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import AGENT, CLIENT, DEMO, Spawn

pytestmark = pytest.mark.e2e

# The one bounded quiet wait the check is made of (as acp-tck waits): a late update would
# arrive within it on any machine, and none must.
QUIET_SECONDS = 1.0


Traffic = list[tuple[str, dict[str, Any]]]  # (sender, message), in the order seen


def updates_around_answer(raw: Traffic, method: str) -> tuple[list[Any], list[Any]]:
    """The session/update params between the last `method` call and its answer, and
    after the answer."""
    call = max(i for i, (who, m) in enumerate(raw) if who == CLIENT and m.get("method") == method)
    answer = next(
        i
        for i in range(call, len(raw))
        if raw[i][0] == AGENT and raw[i][1].get("id") == raw[call][1]["id"]
        if "method" not in raw[i][1]
    )

    def updates(span: Traffic) -> list[Any]:
        return [m["params"] for who, m in span if m.get("method") == "session/update"]

    return updates(raw[call:answer]), updates(raw[answer + 1 :])


def kinds(updates: list[Any], session_id: str) -> list[str]:
    return [u["update"]["sessionUpdate"] for u in updates if u["sessionId"] == session_id]


async def a_session_with_history(spawn: Spawn, workdir: Path) -> str:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert result.stop_reason == "end_turn"
    return sid


async def test_nothing_follows_the_load_response_for_a_quiet_second(
    spawn: Spawn, workdir: Path
) -> None:
    sid = await a_session_with_history(spawn, workdir)
    async with spawn(DEMO) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        await asyncio.sleep(QUIET_SECONDS)
        before, after = updates_around_answer(agent.raw, "session/load")
    shown = kinds(before, sid)
    assert shown[0] == "user_message_chunk" and "agent_message_chunk" in shown  # the replay
    assert shown[-2:] == ["available_commands_update", "usage_update"]  # then the announce
    assert before[0]["_meta"]["iac_code"]["turn"] == {"state": "idle"}
    assert after == []


async def test_nothing_follows_the_resume_response_for_a_quiet_second(
    spawn: Spawn, workdir: Path
) -> None:
    sid = await a_session_with_history(spawn, workdir)
    async with spawn(DEMO) as agent:
        await agent.initialize()
        await agent.conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        await asyncio.sleep(QUIET_SECONDS)
        before, after = updates_around_answer(agent.raw, "session/resume")
    assert kinds(before, sid) == ["available_commands_update", "usage_update"]  # no replay
    assert after == []


async def test_a_fork_is_announced_after_its_response_and_its_source_stays_quiet(
    spawn: Spawn, workdir: Path
) -> None:
    sid = await a_session_with_history(spawn, workdir)
    async with spawn(DEMO) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        fork = await agent.conn.fork_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        await asyncio.sleep(QUIET_SECONDS)
        before, after = updates_around_answer(agent.raw, "session/fork")
    assert before == []  # the client cannot route what names an id it does not know yet
    assert kinds(after, fork.session_id) == ["available_commands_update", "usage_update"]
    assert kinds(after, sid) == []


async def test_a_load_and_the_prompt_after_it_keep_their_order(spawn: Spawn, workdir: Path) -> None:
    """What follows the response is only what is new: the next prompt's own updates."""
    sid = await a_session_with_history(spawn, workdir)
    async with spawn(DEMO) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert result.stop_reason == "end_turn"
        _, after = updates_around_answer(agent.raw, "session/load")
    assert "available_commands_update" not in kinds(after, sid)
    assert "agent_message_chunk" in kinds(after, sid)
