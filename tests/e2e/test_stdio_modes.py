"""Modes, options and remembered permissions through the real process, the official client
and the real SDK against the scripted Messages API."""

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_tools import all_valid, calls, tool_results
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    stream,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.e2e


async def start(agent: Agent, cwd: Path) -> Any:
    await agent.initialize()
    return await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])


def values(options: Any) -> dict[str, str]:
    return {o.id: o.current_value for o in options}


def updates(agent: Agent, kind: str) -> list[Any]:
    return [u for _, u in agent.client.updates if u.session_update == kind]


async def test_modes_are_offered_and_switch_through_both_doors(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        sid = session.session_id
        assert session.modes.current_mode_id == "default"
        assert [m.id for m in session.modes.available_modes] == ["default", "accept_edits", "plan"]
        assert values(session.config_options) == {
            "mode": "default",
            "model": "claude-test",
            "thought_level": "off",
            "sandbox": "workspace-write",  # the sandbox's defaults (docs/sandbox.md)
            "network": "none",
        }
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        answer = await agent.conn.set_config_option(
            config_id="mode", session_id=sid, value="accept_edits"
        )
        assert values(answer.config_options)["mode"] == "accept_edits"
        with pytest.raises(RequestError) as error:
            await agent.conn.set_session_mode(session_id=sid, mode_id="bypass")
        assert error.value.code == -32602
        assert error.value.data["available"] == ["default", "accept_edits", "plan"]
    modes = [u.current_mode_id for u in updates(agent, "current_mode_update")]
    assert modes == ["plan", "accept_edits"]
    option_modes = [
        values(u.config_options)["mode"] for u in updates(agent, "config_option_update")
    ]
    assert option_modes == ["plan", "accept_edits"]


async def test_bypass_is_offered_when_the_operator_allows_it(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(calls(tool_use("bash", {"command": "echo ran > out.txt"}, id="t1")))
    server.script(stream(text("Done.")))
    env = anthropic_env(server, IAC_CODE_ALLOW_BYPASS="1", IAC_CODE_DEFAULT_MODE="bypass")
    async with spawn(env) as agent:
        session = await start(agent, workdir)
        assert session.modes.current_mode_id == "bypass"
        assert "bypass" in [m.id for m in session.modes.available_modes]
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert agent.client.permission_requests == []
    assert (workdir / "out.txt").read_text() == "ran\n"
    all_valid(server)


async def test_plan_mode_refuses_a_write_without_asking_and_leaves_the_file(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "a.txt").write_text("before\n")
    server.script(
        calls(tool_use("write_file", {"path": "a.txt", "content": "after\n"}, id="w1")),
        stream(text("I'll plan instead.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        await agent.conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("change a.txt")]
        )
    assert result.stop_reason == "end_turn"
    assert agent.client.permission_requests == []
    assert (workdir / "a.txt").read_text() == "before\n"
    (refused,) = tool_results(server, 1)
    assert refused["is_error"] and "plan mode" in refused["content"]
    assert "## Mode: Plan" in server.requests[0].system
    assert "exit_plan_mode" in {t["name"] for t in server.requests[0].body["tools"]}
    assert agent.client.tool_updates("w1")[-1].status == "failed"
    all_valid(server)


async def test_exit_plan_mode_to_accept_edits_then_a_write_runs_unasked(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(tool_use("exit_plan_mode", {"plan": "1. Create a.txt"}, id="p1")),
        calls(tool_use("write_file", {"path": "a.txt", "content": "new\n"}, id="w1")),
        calls(tool_use("bash", {"command": "cat a.txt"}, id="b1")),
        stream(text("Done.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        sid = session.session_id
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        agent.client.answers = ["accept_edits", "reject_once"]
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("plan it")])
    assert result.stop_reason == "end_turn"
    (plan_call, plan_options), (bash_call, _) = agent.client.permission_requests
    assert plan_call.kind == "switch_mode"
    assert [(o.option_id, o.kind) for o in plan_options] == [
        ("accept_edits", "allow_always"),
        ("default", "allow_once"),
        ("plan", "reject_once"),
    ]
    assert plan_call.content[0].content.text == "1. Create a.txt"
    assert bash_call.kind == "execute"  # accept_edits still asks for commands
    assert (workdir / "a.txt").read_text() == "new\n"
    modes = [u.current_mode_id for u in updates(agent, "current_mode_update")]
    assert modes == ["plan", "accept_edits"]
    assert "approved" in tool_results(server, 1)[0]["content"]
    assert "## Mode: Plan" not in server.requests[1].system
    all_valid(server)


async def test_accept_edits_writes_without_asking_but_asks_for_bash(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(
            tool_use("write_file", {"path": "b.txt", "content": "x\n"}, id="w1"),
            tool_use("bash", {"command": "rm b.txt"}, id="b1"),
        ),
        stream(text("Done.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        await agent.conn.set_config_option(
            config_id="mode", session_id=session.session_id, value="accept_edits"
        )
        agent.client.answers = ["reject_once"]
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    ((asked, _),) = agent.client.permission_requests
    assert asked.tool_call_id == "b1"
    assert (workdir / "b.txt").read_text() == "x\n"
    all_valid(server)


async def test_mode_model_thought_level_and_sandbox_survive_restart_load_and_fork(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    env = anthropic_env(server)
    async with spawn(env) as first:
        session = await start(first, workdir)
        sid = session.session_id
        await first.conn.set_session_mode(session_id=sid, mode_id="plan")
        await first.conn.set_config_option(
            config_id="model", session_id=sid, value="claude-opus-4-5"
        )
        await first.conn.set_config_option(config_id="thought_level", session_id=sid, value="high")
        await first.conn.set_config_option(config_id="sandbox", session_id=sid, value="off")
        await first.conn.set_config_option(config_id="network", session_id=sid, value="full")
        first.kill()
    expected = {
        "mode": "plan",
        "model": "claude-opus-4-5",
        "thought_level": "high",
        "sandbox": "off",
        "network": "full",
    }
    async with spawn(env) as second:
        await second.initialize()
        loaded = await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "plan"
        assert values(loaded.config_options) == expected
        fork = await second.conn.fork_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert fork.modes.current_mode_id == "plan"
        assert values(fork.config_options) == expected
    async with spawn(env) as third:
        await third.initialize()
        resumed = await third.conn.resume_session(
            cwd=str(workdir), session_id=fork.session_id, mcp_servers=[]
        )
        assert values(resumed.config_options) == expected


async def test_thought_level_high_sends_a_budget_and_streams_thinking(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(thinking("Reading ", "first."), tool_use("read_file", {"path": "a.txt"}, id="r1")),
        stream(thinking("It says hi."), text("It says hi.")),
    )
    (workdir / "a.txt").write_text("hi\n")
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        sid = session.session_id
        answer = await agent.conn.set_config_option(
            config_id="thought_level", session_id=sid, value="high"
        )
        assert values(answer.config_options)["thought_level"] == "high"
        await agent.conn.prompt(session_id=sid, prompt=[text_block("read a.txt")])
    for request in server.requests:
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 32_000}
        assert request.body["max_tokens"] == 32_000 + 8192
    thoughts = "".join(u.content.text for u in updates(agent, "agent_thought_chunk"))
    assert thoughts == "Reading first.It says hi."
    # The tool loop resends the thinking block first, with its signature.
    assistant = server.requests[1].body["messages"][-2]
    assert assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["signature"]
    all_valid(server)


async def test_a_model_option_value_the_server_does_not_offer_is_refused(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        sid = session.session_id
        for config_id, value in (("model", "gpt-9"), ("thought_level", "max"), ("colour", "x")):
            with pytest.raises(RequestError) as error:
                await agent.conn.set_config_option(config_id=config_id, session_id=sid, value=value)
            assert error.value.code == -32602
            assert error.value.data["configId"] == config_id
        answer = await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="claude-3-5-haiku-latest"
        )
    assert values(answer.config_options) == {
        "mode": "default",
        "model": "claude-3-5-haiku-latest",
        "sandbox": "workspace-write",
        "network": "none",
    }
    assert updates(agent, "config_option_update")  # only the accepted change is announced
    assert len(updates(agent, "config_option_update")) == 1


async def test_always_allow_is_remembered_for_the_project_across_restarts(
    spawn: Spawn, workdir: Path, tmp_path: Path, server: ScriptedAnthropic
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    write = {"path": "w.txt", "content": "x\n"}
    server.script(
        calls(tool_use("write_file", write, id="w1")),
        stream(text("Written.")),
        calls(tool_use("write_file", write, id="w2")),
        stream(text("Written again.")),
        calls(tool_use("write_file", write, id="w3")),
        stream(text("Not written.")),
    )
    env = anthropic_env(server)
    async with spawn(env) as first:
        session = await start(first, workdir)
        first.client.answers = ["allow_always"]
        await first.conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    _, options = first.client.permission_requests[0]
    always = next(o for o in options if o.kind == "allow_always")
    assert always.name == "Always allow write_file in this project"
    async with spawn(env) as second:
        again = await start(second, workdir)
        await second.conn.prompt(session_id=again.session_id, prompt=[text_block("write")])
        assert second.client.permission_requests == []  # the project's rule covered it
        elsewhere = await second.conn.new_session(cwd=str(other), mcp_servers=[])
        second.client.answers = ["reject_once"]
        await second.conn.prompt(session_id=elsewhere.session_id, prompt=[text_block("write")])
        assert len(second.client.permission_requests) == 1  # another cwd asks
    assert (workdir / "w.txt").exists() and not (other / "w.txt").exists()
    all_valid(server)


async def test_a_bash_rule_covers_its_subcommand_and_is_shown_where_it_does_not(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(tool_use("bash", {"command": "git status"}, id="b1")),
        calls(tool_use("bash", {"command": "git status --short"}, id="b2")),
        calls(tool_use("bash", {"command": "git push"}, id="b3")),
        stream(text("Done.")),
    )
    (workdir / ".git").mkdir()
    async with spawn(anthropic_env(server)) as agent:
        session = await start(agent, workdir)
        agent.client.answers = ["allow_always", "reject_once"]
        result = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("git")])
    assert result.stop_reason == "end_turn"
    (first, options), (third, _) = agent.client.permission_requests
    assert (first.tool_call_id, third.tool_call_id) == ("b1", "b3")  # b2 was covered
    always = next(o for o in options if o.kind == "allow_always")
    assert always.name == "Always allow `git status …` commands in this project"
    asked = agent.sent_by_agent("session/request_permission")
    assert "_meta" not in asked[0]["params"]
    (shown,) = asked[1]["params"]["_meta"]["iac-code"]["rememberedRules"]
    assert (shown["tool"], shown["command"], shown["exact"]) == ("bash", ["git", "status"], False)
    assert tool_results(server, 3)[0]["content"] == "Permission denied."
    all_valid(server)
