"""Tools and permissions through the real process, the official client and the real SDK."""

import asyncio
import uuid
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.patience import PATIENCE
from tests.support.processes import survivors
from tests.support.scripted_anthropic import (
    HANG,
    ScriptedAnthropic,
    assert_valid_history,
    stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e


def env(server: ScriptedAnthropic, **extra: str) -> dict[str, str]:
    return anthropic_env(server, **extra)


def calls(*parts, **kw):  # type: ignore[no-untyped-def]
    return stream(*parts, stop_reason="tool_use", **kw)


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    return session.session_id


def tool_results(server: ScriptedAnthropic, request: int) -> list[dict]:
    last = server.requests[request].messages[-1]
    return [b for b in last["content"] if b["type"] == "tool_result"]


def all_valid(server: ScriptedAnthropic) -> None:
    for request in server.requests:
        assert_valid_history(request.body["messages"])
    server.assert_script_consumed()


async def test_a_read_runs_without_asking(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "hello.txt").write_text("Hello from disk\n")
    server.script(
        calls(tool_use("read_file", {"path": "hello.txt"}, id="toolu_r1")),
        stream(text("It says hello.")),
    )
    async with spawn(env(server)) as agent:
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("read it")])
    assert result.stop_reason == "end_turn"
    assert agent.client.permission_requests == []
    first, filled, *rest = agent.client.tool_updates("toolu_r1")
    # Shown as the model starts it (its input still coming), then filled in.
    assert (first.session_update, first.status, first.kind, first.title) == (
        "tool_call",
        "pending",
        "read",
        "read_file",
    )
    assert first.raw_input is None
    assert (filled.session_update, filled.title) == ("tool_call_update", "Read hello.txt")
    assert filled.raw_input == {"path": "hello.txt"}
    assert filled.locations[0].path == str(workdir / "hello.txt")
    # (a writer that lags may merge the filling update with the next one)
    statuses = [u.status for u in (filled, *rest) if u.status]
    assert statuses == ["in_progress", "completed"]
    assert "Hello from disk" in rest[-1].content[0].content.text
    assert "Hello from disk" in tool_results(server, 1)[0]["content"]
    tools = {t["name"] for t in server.requests[0].body["tools"]}
    assert tools == {
        "read_file",
        "list_files",
        "glob",
        "grep",
        "web_fetch",
        "write_file",
        "edit_file",
        "bash",
        "agent",
        "todo_write",
        "task_output",
        "task_kill",
    }
    all_valid(server)


async def test_write_allowed_once_then_rejected_once(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(tool_use("write_file", {"path": "a.txt", "content": "one"}, id="toolu_w1")),
        calls(tool_use("write_file", {"path": "a.txt", "content": "two"}, id="toolu_w2")),
        stream(text("Done.")),
    )
    async with spawn(env(server)) as agent:
        agent.client.answers = ["allow_once", "reject_once"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("write")])
    assert result.stop_reason == "end_turn"
    assert (workdir / "a.txt").read_text() == "one"  # the rejected write never happened
    (asked, options), _ = agent.client.permission_requests
    assert asked.tool_call_id == "toolu_w1"
    assert asked.content[0].type == "diff"
    assert (asked.content[0].path, asked.content[0].new_text) == (str(workdir / "a.txt"), "one")
    assert asked.raw_input == {"path": "a.txt", "content": "one"}
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    # the tool call was shown, with its input, before permission was asked for it
    shown = [
        m
        for s, m in agent.raw
        if m.get("method") in ("session/update", "session/request_permission")
    ]
    first_ask = next(i for i, m in enumerate(shown) if m["method"] == "session/request_permission")
    before = [m["params"]["update"] for m in shown[:first_ask]]
    assert [u["sessionUpdate"] for u in before if u.get("toolCallId") == "toolu_w1"] == [
        "tool_call",
        "tool_call_update",
    ]
    assert before[-1]["toolCallId"] == "toolu_w1" and "rawInput" in before[-1]
    final_write = agent.client.tool_updates("toolu_w1")[-1]
    assert final_write.status == "completed"
    assert final_write.content[0].type == "diff"
    assert agent.client.tool_updates("toolu_w2")[-1].status == "failed"
    assert tool_results(server, 2)[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_w2",
        "content": "Permission denied.",
        "is_error": True,
    }
    all_valid(server)


async def test_always_answers_are_not_asked_again(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(
            tool_use("write_file", {"path": "a.txt", "content": "1"}),
            tool_use("bash", {"command": "echo hi"}),
        ),
        calls(
            tool_use("write_file", {"path": "b.txt", "content": "2"}),
            tool_use("bash", {"command": "echo again"}),
        ),
        stream(text("ok")),
    )
    async with spawn(env(server)) as agent:
        agent.client.answers = ["allow_always", "reject_always"]
        sid = await start(agent, workdir)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert len(agent.client.permission_requests) == 2
    assert (workdir / "b.txt").read_text() == "2"
    assert [r["is_error"] for r in tool_results(server, 2)] == [False, True]
    assert tool_results(server, 2)[1]["content"] == "Permission denied."
    all_valid(server)


async def test_cancelling_the_permission_request_ends_the_turn(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(calls(tool_use("bash", {"command": "touch never"})), stream(text("next")))
    async with spawn(env(server)) as agent:
        agent.client.answers = ["cancelled"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert result.stop_reason == "cancelled"
        assert not (workdir / "never").exists()
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
    assert again.stop_reason == "end_turn"
    all_valid(server)


async def test_cancel_during_a_long_bash_kills_its_process_group(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    # Found by name, not by the pid the command saw: a sandboxed command has its own pids.
    marker = f"iac-sleeper-{uuid.uuid4().hex[:12]}"
    started = workdir / "started"
    server.script(
        calls(
            tool_use(
                "bash",
                {"command": f"(exec -a {marker} sleep 60) & touch {started}; echo started; wait"},
            )
        ),
        stream(text("after")),
    )
    async with spawn(env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
        )
        deadline = asyncio.get_running_loop().time() + PATIENCE
        while not (started.exists() and survivors(marker)):
            assert asyncio.get_running_loop().time() < deadline, "the command never started"
            await asyncio.sleep(0.02)
        await agent.conn.cancel(session_id=sid)
        result = await asyncio.wait_for(prompt, PATIENCE)  # not a minute: the sleep was stopped
        assert result.stop_reason == "cancelled"
        assert survivors(marker) == []
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("next")])
    assert again.stop_reason == "end_turn"
    (result_block,) = tool_results(server, 1)[-1:]
    assert "Cancelled" in result_block["content"]
    bash_updates = [u for _, u in agent.client.updates if u.session_update == "tool_call_update"]
    assert any(
        "started" in (c.content.text if c.type == "content" else "")
        for u in bash_updates
        if u.content
        for c in u.content
    )  # output streamed live
    all_valid(server)


async def test_sub_agent_researches_with_read_only_tools(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "notes.md").write_text("The answer is 42.\n")
    server.script(
        calls(tool_use("agent", {"prompt": "find the answer", "description": "find answer"})),
        calls(tool_use("grep", {"pattern": "answer"})),  # the sub-agent's first request
        stream(text("The notes say 42.")),  # the sub-agent's answer
        stream(text("It is 42.")),
    )
    async with spawn(env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("what?")])
    assert result.stop_reason == "end_turn"
    sub_tools = {t["name"] for t in server.requests[1].body["tools"]}
    assert sub_tools == {"read_file", "list_files", "glob", "grep", "web_fetch"}
    assert "notes.md:1:The answer is 42." in tool_results(server, 2)[0]["content"]
    assert tool_results(server, 3)[0]["content"] == "The notes say 42."
    all_valid(server)


async def test_tool_calls_can_be_cancelled_mid_model_stream_too(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("thinking about tools"), HANG), stream(text("fine")))
    async with spawn(env(server)) as agent:
        sid = await start(agent, workdir)
        prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("x")]))
        await asyncio.to_thread(server.wait_for_hang)
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(prompt, PATIENCE)).stop_reason == "cancelled"
