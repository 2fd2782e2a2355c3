"""Sessions that survive: restarts and crashes between every step, the real process each time."""

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    assert_valid_history,
    stream,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def env(server: ScriptedAnthropic) -> dict[str, str]:
    return anthropic_env(server)


async def open_agent(agent: Agent) -> None:
    await agent.initialize()


def _answer_span(agent: Agent, request_method: str) -> tuple[int, int]:
    """Where the last `request_method` call and its answer are in the raw traffic."""
    request = [m for s, m in agent.raw if m.get("method") == request_method][-1]
    answer = next(
        i
        for i, (s, m) in enumerate(agent.raw)
        if s == "agent" and m.get("id") == request["id"] and "method" not in m
    )
    return next(i for i, (s, m) in enumerate(agent.raw) if m is request), answer


def updates_before_answer(agent: Agent, request_method: str) -> list[dict]:
    """session/update params sent before the answer to the last `request_method` call."""
    start, answer = _answer_span(agent, request_method)
    return [
        m["params"]["update"]
        for s, m in agent.raw[start:answer]
        if m.get("method") == "session/update"
    ]


async def test_create_prompt_kill_restart_list_load_prompt(
    spawn: Spawn, workdir: Path, env: dict[str, str], server: ScriptedAnthropic
) -> None:
    (workdir / "a.txt").write_text("contents of a\n")
    server.script(
        stream(
            thinking("Let me read it.", signature="sig-1"),
            tool_use("read_file", {"path": "a.txt"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(text("The file says: contents of a")),
        stream(text("Still here.")),
    )
    async with spawn(env) as first:
        await open_agent(first)
        sid = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await first.conn.prompt(session_id=sid, prompt=[text_block("Read a.txt please")])
        first.kill()

    async with spawn(env) as second:
        await open_agent(second)
        listed = await second.conn.list_sessions(cwd=str(workdir))
        assert [(s.session_id, s.title) for s in listed.sessions] == [(sid, "Read a.txt please")]
        assert listed.sessions[0].updated_at.endswith("Z")
        await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        replay = updates_before_answer(second, "session/load")
        assert [(u["sessionUpdate"], u.get("status")) for u in replay] == [
            ("user_message_chunk", None),
            ("agent_thought_chunk", None),
            ("tool_call", "pending"),
            ("tool_call_update", "completed"),
            ("agent_message_chunk", None),
            # What any opened session is told: its commands, how full its context is.
            ("available_commands_update", None),
            ("usage_update", None),
        ]
        assert replay[0]["content"]["text"] == "Read a.txt please"
        assert replay[2]["title"] == "Read a.txt"
        assert replay[2]["name"] == "read_file"  # the tool's stable name, stored with the call
        assert replay[2]["locations"][0]["path"] == str(workdir / "a.txt")
        assert "contents of a" in replay[3]["content"][0]["content"]["text"]
        assert replay[4]["content"]["text"] == "The file says: contents of a"
        result = await second.conn.prompt(session_id=sid, prompt=[text_block("Still there?")])
    assert result.stop_reason == "end_turn"
    history = server.requests[2].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "user"]
    assert history[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Let me read it.",
        "signature": "sig-1",
    }
    for request in server.requests:
        assert_valid_history(request.body["messages"])


async def test_kill_during_a_running_bash_then_load_and_prompt(
    spawn: Spawn, workdir: Path, env: dict[str, str], server: ScriptedAnthropic
) -> None:
    marker = workdir / "started"
    server.script(
        stream(
            tool_use("bash", {"command": f"touch {marker}; sleep 60"}, id="toolu_b"),
            stop_reason="tool_use",
        ),
        stream(text("Recovered.")),
    )
    async with spawn(env) as first:
        first.client.answers = ["allow_once"]
        await open_agent(first)
        sid = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        prompt = asyncio.create_task(
            first.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
        )
        # The command has started (so its tool use is stored) before the kill: the bound
        # only guards against hanging (10 s was not enough on a loaded machine).
        for _ in range(3000):
            if marker.exists():
                break
            await asyncio.sleep(0.02)
        assert marker.exists(), "the command never started"
        first.kill()
        with pytest.raises(ConnectionError):  # the connection dies with the process
            await prompt

    async with spawn(env) as second:
        await open_agent(second)
        await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        replay = updates_before_answer(second, "session/load")
        tool = [u for u in replay if u.get("toolCallId") == "toolu_b"]
        assert [u["sessionUpdate"] for u in tool] == ["tool_call", "tool_call_update"]
        assert tool[1]["status"] == "failed"
        result = await second.conn.prompt(session_id=sid, prompt=[text_block("what happened?")])
    assert result.stop_reason == "end_turn"
    history = server.requests[1].body["messages"]
    assert_valid_history(history)
    assert history[2]["content"][0]["tool_use_id"] == "toolu_b"
    assert "interrupted" in history[2]["content"][0]["content"]


async def test_fork_and_prompt_both_branches_across_a_restart(
    spawn: Spawn, workdir: Path, env: dict[str, str], server: ScriptedAnthropic
) -> None:
    server.script(
        stream(text("base answer")),
        stream(text("fork answer")),
        stream(text("source answer")),
        stream(text("fork again")),
        stream(text("source again")),
    )
    async with spawn(env) as first:
        await open_agent(first)
        source = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await first.conn.prompt(session_id=source, prompt=[text_block("base")])
        fork = (
            await first.conn.fork_session(cwd=str(workdir), session_id=source, mcp_servers=[])
        ).session_id
        assert fork != source
        await first.conn.prompt(session_id=fork, prompt=[text_block("in fork")])
        await first.conn.prompt(session_id=source, prompt=[text_block("in source")])

    async with spawn(env) as second:
        await open_agent(second)
        await second.conn.resume_session(cwd=str(workdir), session_id=fork, mcp_servers=[])
        await second.conn.prompt(session_id=fork, prompt=[text_block("fork 2")])
        await second.conn.load_session(cwd=str(workdir), session_id=source, mcp_servers=[])
        await second.conn.prompt(session_id=source, prompt=[text_block("source 2")])

    def said(request: int) -> list[str]:
        return [
            b["text"]
            for m in server.requests[request].messages
            for b in m["content"]
            if b["type"] == "text"
        ]

    assert said(3) == ["base", "base answer", "in fork", "fork answer", "fork 2"]
    assert said(4) == ["base", "base answer", "in source", "source answer", "source 2"]


async def test_resume_close_and_delete(
    spawn: Spawn, workdir: Path, env: dict[str, str], server: ScriptedAnthropic
) -> None:
    server.script(stream(text("one")), stream(text("two")))
    async with spawn(env) as agent:
        await open_agent(agent)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("first")])
        await agent.conn.close_session(session_id=sid)
        updates = len(agent.client.updates)
        resumed = await agent.conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert resumed.modes.current_mode_id == "default"
        # Resume does not replay: it tells only the commands and the context usage.
        assert [u.session_update for _, u in agent.client.updates[updates:]] == [
            "available_commands_update",
            "usage_update",
        ]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("second")])
        with pytest.raises(RequestError) as caught:
            await agent.conn.resume_session(cwd="/", session_id=sid, mcp_servers=[])
        assert caught.value.data["cwd"] == str(workdir)  # says where the session lives
        for _ in range(2):
            await agent.conn._conn.send_request("session/delete", {"sessionId": sid})
        with pytest.raises(RequestError) as caught:
            await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert caught.value.code == -32602
        assert caught.value.data == {"sessionId": sid}
        assert (await agent.conn.list_sessions(cwd=str(workdir))).sessions == []


async def test_sixty_sessions_page_through_next_cursor(spawn: Spawn, workdir: Path) -> None:
    other = workdir / "other"
    other.mkdir()
    async with spawn({"IAC_CODE_PROVIDER": "demo"}) as agent:
        await open_agent(agent)
        made = [
            (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            for _ in range(60)
        ]
        await agent.conn.new_session(cwd=str(other), mcp_servers=[])
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = await agent.conn.list_sessions(cwd=str(workdir), cursor=cursor)
            pages += 1
            seen += [s.session_id for s in page.sessions]
            cursor = page.next_cursor
            if not cursor:
                break
        assert pages == 2
        assert seen == made[::-1]
        with pytest.raises(RequestError) as caught:
            await agent.conn.list_sessions(cwd=str(other), cursor=page_cursor(agent))
        assert caught.value.code == -32602


def page_cursor(agent: Agent) -> str:
    """The first nextCursor the agent gave out."""
    return next(
        m["result"]["nextCursor"]
        for s, m in agent.raw
        if s == "agent" and isinstance(m.get("result"), dict) and m["result"].get("nextCursor")
    )
