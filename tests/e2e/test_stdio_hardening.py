"""Regression tests for the hardening findings, through the real process and the real SDK."""

import asyncio
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import RequestError, text_block

from adapters.workspace.processes import group_alive
from tests.e2e.conftest import DEMO, Agent, Spawn, anthropic_env
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    assert_valid_history,
    stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

LONE = "\ud800"


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


def replayed_text(agent: Agent) -> str:
    return "".join(
        u.content.text
        for _, u in agent.client.updates
        if u.session_update in ("user_message_chunk", "agent_message_chunk")
        and getattr(u.content, "text", None)
    )


async def test_finding_1_a_lone_surrogate_in_a_prompt_does_not_break_the_session(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn(DEMO) as agent:
        sid = await start(agent, workdir)
        first = await agent.conn.prompt(session_id=sid, prompt=[text_block(f"caf{LONE}")])
        second = await agent.conn.prompt(session_id=sid, prompt=[text_block("still there?")])
        assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    async with spawn(DEMO) as agent:  # stored, reloadable, and shown repaired
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        assert "caf\ufffd" in replayed_text(agent)
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        assert again.stop_reason == "end_turn"


async def test_finding_1_a_lone_surrogate_from_the_model_does_not_break_the_session(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(text(f"bad {LONE} text")),
        stream(text("fine")),
        stream(text("after reload")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        first = await agent.conn.prompt(session_id=sid, prompt=[text_block("say it")])
        second = await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
        assert agent.client.agent_text() == "bad \ufffd textfine"
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        third = await agent.conn.prompt(session_id=sid, prompt=[text_block("more")])
        assert third.stop_reason == "end_turn"
    # What the model was sent back is its own text, repaired.
    assert server.requests[1].body["messages"][1]["content"][0]["text"] == "bad \ufffd text"
    for request in server.requests:
        assert_valid_history(request.body["messages"])


async def test_finding_1_an_undecodable_file_name_does_not_break_the_session(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    server.script(
        stream(tool_use("list_files", {}, id="toolu_ls"), stop_reason="tool_use"),
        stream(text("listed")),
        stream(text("next")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        first = await agent.conn.prompt(session_id=sid, prompt=[text_block("list")])
        second = await agent.conn.prompt(session_id=sid, prompt=[text_block("go on")])
        assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    listing = server.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "caf" in str(listing)


async def test_finding_1_loading_a_lone_surrogate_id_is_invalid_params(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        with pytest.raises(RequestError) as caught:
            await agent.conn.load_session(session_id=LONE, cwd=str(workdir), mcp_servers=[])
        assert caught.value.code == -32602
        assert caught.value.data["sessionId"] == "\ufffd"
        await start(agent, workdir)  # and it serves on


async def test_finding_2_secrets_are_not_in_the_servers_environment_block(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("ok")))
    secrets = {"IACCODE_ACP_HTTP_TOKEN": "tok-secret-123", "OPENAI_API_KEY": "sk-other-456"}
    async with spawn(anthropic_env(server, **secrets)) as agent:
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
        environ = Path(f"/proc/{agent.process.pid}/environ").read_bytes()  # noqa: ASYNC240
    assert result.stop_reason == "end_turn"  # the key still reached the model client...
    assert "sk-test-secret" in " ".join(server.requests[0].headers.values())
    for secret in ("sk-test-secret", "tok-secret-123", "sk-other-456"):
        assert secret.encode() not in environ  # ...but not the block a tool could read
    assert b"IAC_CODE_PROVIDER=anthropic" in environ  # the rest of the environment is there


async def test_finding_4_a_huge_write_is_shown_capped_and_written_whole(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    content = "line of text\n" * (20 * 2**20 // 13)  # 20 MiB
    server.script(
        stream(
            tool_use("write_file", {"path": "big.txt", "content": content}, id="toolu_big"),
            stop_reason="tool_use",
        ),
        stream(text("written")),
    )
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("write it")])
        asked = agent.sent_by_agent("session/request_permission")
    assert result.stop_reason == "end_turn"
    assert (workdir / "big.txt").read_text() == content  # the file got everything
    (request,) = asked
    assert len(json.dumps(request)) < 2 * 2**20  # the client a capped view
    tool_call = request["params"]["toolCall"]
    shown = tool_call["rawInput"]["content"]
    assert shown.startswith(content[:1000]) and f"of {len(content):,} characters" in shown
    (diff,) = tool_call["content"]
    assert "truncated for display" in diff["newText"]


async def _poll(condition: Callable[[], bool], bound: float = 30.0) -> bool:
    """True as soon as `condition` holds; False if it still does not after `bound` seconds."""
    for _ in range(int(bound / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
async def test_finding_3_a_running_command_does_not_outlive_the_server(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, how: str
) -> None:
    # Far longer than any stall of a busy machine between the command's start and the kill
    # (4 s was not): only a command that outlived the server could finish its work.
    command = "echo $$ > group; (sleep 60; touch late-child) & sleep 60; touch late-command"
    server.script(
        stream(tool_use("bash", {"command": command}, id="toolu_sh"), stop_reason="tool_use"),
        stream(text("never reached")),
    )
    group_file = workdir / "group"
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        prompt = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
        )
        assert await _poll(lambda: group_file.exists() and group_file.read_text().strip() != "")
        group = int(group_file.read_text())
        if how == "SIGKILL":
            agent.kill()
        else:
            agent.killed = True  # the prompt stays unanswered: the server is going away
            agent.process.send_signal(signal.SIGTERM)
        assert await _poll(lambda: not group_alive(group)), "the command outlived the server"
        prompt.cancel()
        await asyncio.gather(prompt, return_exceptions=True)
    # The whole group is gone, so neither the command nor its child can finish its work.
    assert not (workdir / "late-child").exists() and not (workdir / "late-command").exists()
