"""The early `session/new` (answered while the agent loads) keeps every promise of the
protocol (issue 42, finding 4), through the real process and the official client, the load
held back by the test-only `sitecustomize` of test_stdio_early_new:

- a first prompt cancelled while the agent loads: the session's announce (its commands,
  `/rewind` among them, and its context usage) comes before the prompt's `cancelled`
  answer, and nothing for the session follows that answer (acp-tck ACP-CANCEL-002);
- stdin's EOF ends the process at every moment after spawn, the agent's load included
  (ACP-SHUTDOWN-001): a load held for good (120 s) is not waited for."""

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import AGENT, CLIENT, Agent, Spawn, until
from tests.e2e.test_stdio_early_new import EARLY, database_made, held

pytestmark = pytest.mark.e2e

# Well below the held load (120 s), well above an exit at once on a loaded machine: the
# process did not wait for its load. The time taken is printed (issue 42 asks for 300 ms).
EXIT_BOUND = 20.0


def _for_session(agent: Agent, session_id: str) -> list[tuple[int, dict[str, Any]]]:
    """Each session/update for the session, with its place on the wire."""
    return [
        (i, m["params"]["update"])
        for i, (who, m) in enumerate(agent.raw)
        if who == AGENT
        and m.get("method") == "session/update"
        and m["params"]["sessionId"] == session_id
    ]


def _answer_place(agent: Agent, method: str) -> int:
    call = next(m["id"] for who, m in agent.raw if who == CLIENT and m.get("method") == method)
    return next(
        i
        for i, (who, m) in enumerate(agent.raw)
        if who == AGENT and m.get("id") == call and "method" not in m
    )


async def test_finding_4_a_cancelled_first_prompt_gets_the_announce_first_and_nothing_after(
    spawn: Spawn, workdir: Path, tmp_path: Path
) -> None:
    await database_made(spawn, workdir)
    env, release = held(tmp_path)
    async with spawn(env) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        assert f"{EARLY}: {sid}" in agent.stderr()
        prompt = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        )
        await until(lambda: any(m.get("method") == "session/prompt" for _, m in agent.raw), agent)
        await agent.conn.cancel(session_id=sid)
        release.touch()
        assert (await prompt).stop_reason == "cancelled"
        announced = {"available_commands_update", "usage_update"}
        await until(
            lambda: announced <= {u["sessionUpdate"] for _, u in _for_session(agent, sid)}, agent
        )
        listed = await agent.conn.list_sessions(cwd=str(workdir))  # a round trip after
    assert sid in [s.session_id for s in listed.sessions]
    answer = _answer_place(agent, "session/prompt")
    after = [u["sessionUpdate"] for i, u in _for_session(agent, sid) if i > answer]
    assert after == [], after
    commands = [u for _, u in _for_session(agent, sid) if u["sessionUpdate"] in announced]
    assert [u["sessionUpdate"] for u in commands][:2] == [
        "available_commands_update",
        "usage_update",
    ]
    names = [c["name"] for c in commands[0]["availableCommands"]]
    assert "rewind" in names, names


async def _exit_after_eof(agent: Agent) -> float:
    """Closes the agent's stdin; the seconds until it has exited."""
    closed = time.monotonic()
    agent.process.stdin.close()
    await asyncio.wait_for(agent.process.wait(), EXIT_BOUND)
    took = time.monotonic() - closed
    print(f"exited {took * 1000:.0f} ms after EOF")  # the number for the note
    return took


@pytest.mark.parametrize("moment", ["initialized", "session_made", "prompted"])
async def test_finding_4_eof_while_the_agent_loads_ends_the_process_at_once(
    spawn: Spawn, workdir: Path, tmp_path: Path, moment: str
) -> None:
    await database_made(spawn, workdir)
    env, _release = held(tmp_path)  # never released: the load would take 120 s
    async with spawn(env) as agent:
        prompt = None
        await agent.initialize()
        if moment in ("session_made", "prompted"):
            sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        if moment == "prompted":
            prompt = asyncio.ensure_future(
                agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
            )
            await until(
                lambda: any(m.get("method") == "session/prompt" for _, m in agent.raw), agent
            )
        await _exit_after_eof(agent)
        if prompt is not None:  # answered before the exit: the client still read
            assert (await prompt).stop_reason == "cancelled"
        agent.killed = True  # the wire check allows what the exit left unanswered
    assert "database migrated" not in agent.stderr()


async def test_finding_4_eof_during_a_first_migration_ends_the_process_at_once(
    spawn: Spawn, tmp_path: Path
) -> None:
    env, _release = held(tmp_path)  # a new database: the load would also create it
    async with spawn(env) as agent:
        await agent.initialize()
        await _exit_after_eof(agent)
        agent.killed = True


async def test_finding_4_eof_once_loaded_ends_the_process_at_once(
    spawn: Spawn, workdir: Path, tmp_path: Path
) -> None:
    env, release = held(tmp_path)
    release.touch()
    async with spawn(env) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert result.stop_reason == "end_turn"
        await _exit_after_eof(agent)
        agent.killed = True
