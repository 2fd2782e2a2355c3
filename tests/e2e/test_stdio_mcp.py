"""MCP servers an editor hands the agent, through the real process, the official ACP client,
the real anthropic SDK and our own test MCP server (tests/support/mcp_server.py) on each
transport."""

import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from tests.e2e.conftest import Agent, Spawn, anthropic_env, until
from tests.support.mcp_processes import ROOT, SERVER, McpServerProcesses
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

SECRET = "s3cret-do-not-store"


def stdio_server(name: str, *options: str) -> McpServerStdio:
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[*SERVER, *options],
        env=[EnvVariable(name="PYTHONPATH", value=ROOT), EnvVariable(name="TOKEN", value=SECRET)],
    )


@pytest.fixture
def remote() -> Iterator[Any]:
    """Starts test MCP servers over http or sse; each gives its URL once it listens."""
    processes = McpServerProcesses()
    yield processes.start
    processes.stop()


def calls(name: str, arguments: dict[str, Any], call_id: str) -> bytes:
    return stream(tool_use(name, arguments, id=call_id), stop_reason="tool_use")


def tool_result(server: ScriptedAnthropic, request: int) -> dict[str, Any]:
    [result] = [b for b in server.requests[request].messages[-1]["content"]]
    return result


def offered(server: ScriptedAnthropic, request: int = 0) -> set[str]:
    return {t["name"] for t in server.requests[request].body["tools"]}


def server_states(agent: Agent) -> list[dict[str, Any]]:
    """The latest MCP status the agent sent in a session_info_update's _meta."""
    infos = [
        m["params"]["update"]
        for m in agent.sent_by_agent("session/update")
        if m["params"]["update"]["sessionUpdate"] == "session_info_update"
        and "_meta" in m["params"]["update"]
    ]
    return infos[-1]["_meta"]["iac_code"]["mcpServers"] if infos else []


def status_of(agent: Agent, name: str) -> str | None:
    return next((s["status"] for s in server_states(agent) if s["name"] == name), None)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    return not state.exists() or state.read_text().rpartition(")")[2].split()[0] not in "ZX"


async def open_session(agent: Agent, workdir: Path, *servers: Any) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=list(servers))
    return session.session_id


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
async def test_a_servers_tool_is_called_after_permission_and_its_result_reaches_the_model(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, remote: Any, transport: str
) -> None:
    if transport == "stdio":
        given: Any = stdio_server("tests")
    else:
        model = HttpMcpServer if transport == "http" else SseMcpServer
        given = model(
            type=transport,
            name="tests",
            url=remote(transport, "--require-token", SECRET),
            headers=[HttpHeader(name="Authorization", value=f"Bearer {SECRET}")],
        )
    server.script(
        calls("mcp__tests__echo", {"text": "hello through MCP"}, "toolu_1"),
        stream(text("It echoed.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir, given)
        agent.client.answers = ["allow_once"]
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("echo it")])
        assert result.stop_reason == "end_turn"
        assert {"mcp__tests__echo", "mcp__tests__add", "read_file"} <= offered(server)
        [(call, options)] = agent.client.permission_requests
        assert call.tool_call_id == "toolu_1"
        assert {o.kind for o in options} >= {"allow_once", "allow_always"}
        first, filled, *rest = agent.client.tool_updates("toolu_1")
        assert (first.kind, first.title) == ("other", "mcp__tests__echo")  # as it starts
        # The tool's stable name (a field the pinned SDK's model drops: read from the wire).
        [started] = [
            m["params"]["update"]
            for m in agent.sent_by_agent("session/update")
            if m["params"]["update"]["sessionUpdate"] == "tool_call"
        ]
        assert started["name"] == "mcp__tests__echo"
        [asked] = agent.sent_by_agent("session/request_permission")
        assert asked["params"]["toolCall"]["name"] == "mcp__tests__echo"  # who asks, too
        assert filled.title == "Echo"
        assert rest[-1].status == "completed"
        assert "hello through MCP" in rest[-1].content[0].content.text
        assert "hello through MCP" in str(tool_result(server, 1)["content"])
        [state] = server_states(agent)
        assert state["status"] == "connected" and state["tools"] >= 5
    server.assert_script_consumed()


async def test_a_broken_server_next_to_a_good_one(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(calls("mcp__good__add", {"a": 2, "b": 3}, "toolu_1"), stream(text("5.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(
            agent,
            workdir,
            stdio_server("broken", "--exit-at-once"),
            stdio_server("good"),
            McpServerStdio(name="missing", command="/no/such/mcp-server", args=[], env=[]),
        )
        await until(lambda: status_of(agent, "broken") == "failed", agent)
        await until(lambda: status_of(agent, "missing") == "failed", agent)
        agent.client.answers = ["allow_once"]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("add")])
        assert "5" in str(tool_result(server, 1)["content"])
        said = agent.client.agent_text()
        assert said.count("MCP server 'broken' failed:") == 1
        assert said.count("MCP server 'missing' failed:") == 1
        assert status_of(agent, "good") == "connected"
        assert not {n for n in offered(server) if n.startswith(("mcp__broken", "mcp__missing"))}
    server.assert_script_consumed()


async def test_servers_are_gone_after_close_and_other_sessions_never_see_them(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls("mcp__tests__pid", {}, "toolu_1"),
        stream(text("That is its pid.")),
        calls("mcp__tests__spawn_child", {}, "toolu_2"),
        stream(text("Started a child.")),
        calls("mcp__tests__pid", {}, "toolu_3"),
        stream(text("No such tool here.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir, stdio_server("tests"))
        agent.client.answers = ["allow_once", "allow_once"]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("pid?")])
        await agent.conn.prompt(session_id=sid, prompt=[text_block("child?")])
        pids = [int(re.findall(r"\d+", str(tool_result(server, i)["content"]))[0]) for i in (1, 3)]
        assert all(alive(pid) for pid in pids)

        other = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        await agent.conn.prompt(session_id=other.session_id, prompt=[text_block("pid?")])
        assert not {n for n in offered(server, 4) if n.startswith("mcp__")}
        refused = tool_result(server, 5)
        assert refused["is_error"] is True and "no tool named" in str(refused["content"])
        assert len(agent.client.permission_requests) == 2  # the other session never asked

        await agent.conn.close_session(session_id=sid)
        await until(lambda: not any(alive(pid) for pid in pids), agent)
    server.assert_script_consumed()


async def test_secrets_are_neither_stored_nor_logged_and_load_reconnects(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, tmp_path: Path
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir, stdio_server("tests"))
        await until(lambda: status_of(agent, "tests") == "connected", agent)
        await agent.conn.close_session(session_id=sid)
        await agent.conn.load_session(
            cwd=str(workdir), session_id=sid, mcp_servers=[stdio_server("again")]
        )
        await until(lambda: status_of(agent, "again") == "connected", agent)
    database = tmp_path / "config" / "iac-code.db"
    with sqlite3.connect(database) as db:
        [(stored,)] = db.execute("SELECT mcp_servers FROM sessions WHERE id = ?", (sid,))
    assert '"name": "again"' in stored and '"TOKEN"' in stored
    assert SECRET not in stored
    assert SECRET.encode() not in database.read_bytes()
    assert SECRET not in agent.stderr()


async def test_a_servers_prompt_is_a_slash_command(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("Reviewed.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir, stdio_server("tests"))

        def listed() -> list[str]:
            updates = [
                u
                for _, u in agent.client.updates
                if u.session_update == "available_commands_update"
            ]
            return [c.name for c in updates[-1].available_commands] if updates else []

        await until(lambda: "mcp__tests__review" in listed(), agent)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("/mcp__tests__review app.py")])
        # A load replays the user's own words, not the prompt they expanded into.
        agent.client.updates.clear()
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        said = [
            u.content.text
            for _, u in agent.client.updates
            if u.session_update == "user_message_chunk"
        ]
        assert said == ["/mcp__tests__review app.py"]
    sent = server.requests[0].messages[-1]["content"]
    assert "Please review app.py." in str(sent)
    server.assert_script_consumed()


async def test_a_crashed_server_comes_back_once_on_its_next_use(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls("mcp__tests__crash", {}, "toolu_1"),
        stream(text("It crashed.")),
        calls("mcp__tests__echo", {"text": "back again"}, "toolu_2"),
        stream(text("It is back.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir, stdio_server("tests"))
        agent.client.answers = ["allow_always", "allow_always"]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("crash it")])
        crashed = tool_result(server, 1)
        assert crashed["is_error"] is True and "exited with status 7" in str(crashed["content"])
        await until(lambda: status_of(agent, "tests") == "failed", agent)
        assert agent.client.agent_text().count("MCP server 'tests' failed:") == 1
        await agent.conn.prompt(session_id=sid, prompt=[text_block("echo")])
        assert "mcp__tests__echo" in offered(server, 2)  # still offered: a call restarts it
        assert "back again" in str(tool_result(server, 3)["content"])
        assert status_of(agent, "tests") == "connected"
    server.assert_script_consumed()
