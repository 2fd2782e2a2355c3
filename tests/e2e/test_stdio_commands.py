"""Slash commands through the real process, the official client and the real SDK against
the scripted Messages API: announced with each response that opens a session (after the
response of new and fork, whose id the client learns from it; before the response of load
and resume, whose id it asked for), answered without the model, stored and replayed on
load."""

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import AGENT, CLIENT, Agent, Spawn, anthropic_env, until
from tests.e2e.test_stdio_tools import all_valid
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text

pytestmark = pytest.mark.e2e

# The built-in commands, then the project's own (/init; skills when there are some).
COMMANDS = [
    "compact",
    "clear",
    "rename",
    "model",
    "mode",
    "usage",
    "memory",
    "tasks",
    "agents",
    "queue",
    "rewind",
    "worktree",
    "help",
    "init",
]


async def start(agent: Agent, cwd: Path) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
    return session.session_id


async def say(agent: Agent, sid: str, words: str) -> Any:
    return await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])


def updates(agent: Agent, kind: str) -> list[Any]:
    return [u for _, u in agent.client.updates if u.session_update == kind]


def user_texts(request_messages: list[dict[str, Any]]) -> list[str]:
    """Every text the request carries, in order (user and assistant)."""
    found = []
    for message in request_messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        found += [b["text"] for b in blocks if b.get("type") == "text"]
    return found


def announced(agent: Agent, method: str, session_id: str) -> tuple[int, int]:
    """How many of the session's command announcements came between the last `method`
    call and its answer, and how many after the answer."""
    raw = agent.raw
    call = max(i for i, (who, m) in enumerate(raw) if who == CLIENT and m.get("method") == method)
    call_id = raw[call][1]["id"]
    answer = next(
        i
        for i in range(call, len(raw))
        if raw[i][0] == AGENT and raw[i][1].get("id") == call_id and "method" not in raw[i][1]
    )

    def is_announcement(i: int) -> bool:
        who, m = raw[i]
        params = m.get("params") or {}
        return (
            who == AGENT
            and m.get("method") == "session/update"
            and params.get("sessionId") == session_id
            and params["update"]["sessionUpdate"] == "available_commands_update"
        )

    before = sum(1 for i in range(call, answer) if is_announcement(i))
    return before, sum(1 for i in range(answer, len(raw)) if is_announcement(i))


async def announced_after_answer(agent: Agent, method: str, session_id: str) -> bool:
    """The session's commands came after the answer to the last `method` call, and not
    between the call and its answer (they follow it: wait for them)."""
    await until(lambda: announced(agent, method, session_id)[1] > 0, agent)
    return announced(agent, method, session_id)[0] == 0


def announced_before_answer(agent: Agent, method: str, session_id: str) -> bool:
    """The session's commands came once, between the last `method` call and its answer."""
    return announced(agent, method, session_id) == (1, 0)


async def test_commands_are_announced_with_each_answer_that_opens_a_session(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("Hello.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        assert await announced_after_answer(agent, "session/new", sid)
        await say(agent, sid, "hi")
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        assert announced_before_answer(agent, "session/load", sid)
        fork = await agent.conn.fork_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert await announced_after_answer(agent, "session/fork", fork.session_id)
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert announced_before_answer(agent, "session/resume", sid)
    [listed] = updates(agent, "available_commands_update")
    assert [c.name for c in listed.available_commands] == COMMANDS
    hints = {c.name: c.input.root.hint for c in listed.available_commands if c.input}
    assert set(hints) == {
        *("compact", "rename", "model", "mode", "tasks", "queue", "rewind", "worktree")
    }
    # With the commands comes how full the context is.
    [usage] = updates(agent, "usage_update")
    assert usage.size == 200_000 and usage.used > 0
    all_valid(server)


async def test_rename_usage_and_help_answer_without_the_model(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("Hello."), input_tokens=1200, output_tokens=30))
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "hi")
        agent.client.updates.clear()
        for command in ("/help", "/rename  Release checklist ", "/usage"):
            result = await say(agent, sid, command)
            assert result.stop_reason == "end_turn"
            assert result.usage.total_tokens == 0
        said = agent.client.agent_text()
    assert len(server.requests) == 1  # only "hi" reached the model
    for name in COMMANDS:
        assert f"`/{name}" in said
    assert "`/rename <title>`" in said
    assert [u.title for u in updates(agent, "session_info_update")] == ["Release checklist"]
    assert "Renamed the session to “Release checklist”." in said
    assert "Tokens used in this session: 1,230 (input 1,200, output 30" in said
    assert "of 200,000 tokens" in said
    all_valid(server)


async def test_commands_are_replayed_on_load_as_they_were_shown(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "/rename Notes")
        live = agent.client.agent_text()
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
    [prompt] = updates(agent, "user_message_chunk")
    assert prompt.content.text == "/rename Notes"
    assert agent.client.agent_text() == live == "Renamed the session to “Notes”."
    assert server.requests == []


async def test_clear_starts_a_fresh_context_that_survives_a_restart(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(text("Noted: the secret word is plum.")),
        stream(text("I know nothing about a word.")),
        stream(text("Still nothing.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "Remember the word plum.")
        result = await say(agent, sid, "/clear")
        assert result.stop_reason == "end_turn"
        assert updates(agent, "plan")[-1].entries == []
        await say(agent, sid, "What was the word?")
    assert user_texts(server.requests[1].messages) == ["What was the word?"]
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        replayed = agent.client.agent_text()
        await say(agent, sid, "Any word?")
    assert "Context cleared: the model sees nothing before this point." in replayed
    assert replayed.index("plum") < replayed.index("Context cleared")
    assert user_texts(server.requests[2].messages) == [
        "What was the word?",
        "I know nothing about a word.",
        "Any word?",
    ]
    all_valid(server)


async def test_unknown_slash_words_and_escaped_commands_reach_the_model(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("It is a path.")), stream(text("Here is help.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "/usr/bin/env — what is it?")
        await say(agent, sid, "//help me write a loop")
    assert user_texts(server.requests[0].messages) == ["/usr/bin/env — what is it?"]
    assert user_texts(server.requests[1].messages)[-1] == "/help me write a loop"
    all_valid(server)


async def test_model_and_mode_commands_change_the_options(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    env = anthropic_env(server, IAC_CODE_MODELS="claude-test,claude-haiku-4-5")
    async with spawn(env) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "/model claude-haiku-4-5")
        await say(agent, sid, "/mode plan")
        await say(agent, sid, "/mode nonsense")
        said = agent.client.agent_text()
    assert [u.current_mode_id for u in updates(agent, "current_mode_update")] == ["plan"]
    last = {
        o.id: o.current_value for o in updates(agent, "config_option_update")[-1].config_options
    }
    assert last["model"] == "claude-haiku-4-5" and last["mode"] == "plan"
    assert "The model is now Claude Haiku 4.5 (claude-haiku-4-5)." in said
    assert "The mode is now Plan (plan)." in said
    assert "- `accept_edits`" in said  # an unknown mode lists the choices
    assert server.requests == []
