"""OpenAI-compatible providers through the real process, the official client and the real
`openai` SDK against a scripted chat-completions server (and the scripted Messages API for
the switch from a Claude model)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.scripted_anthropic import ScriptedAnthropic
from tests.support.scripted_anthropic import stream as claude_stream
from tests.support.scripted_anthropic import text as claude_text
from tests.support.scripted_openai import (
    ScriptedOpenAI,
    assert_valid_chat,
    reasoning,
    stream,
    text,
    tool_call,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def chat() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


async def start(agent: Agent, cwd: Path) -> Any:
    await agent.initialize()
    return await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])


def kinds(agent: Agent, kind: str) -> list[Any]:
    return [u for _, u in agent.client.updates if u.session_update == kind]


def all_valid(server: ScriptedOpenAI) -> None:
    for request in server.requests:
        assert_valid_chat(request.body["messages"])
    server.assert_script_consumed()


async def test_a_turn_with_two_tool_calls_and_a_permission_on_a_compatible_server(
    spawn: Spawn, workdir: Path, chat: ScriptedOpenAI
) -> None:
    (workdir / "notes.txt").write_text("remember the milk\n")
    chat.script(
        stream(
            text("Reading, then writing."),
            tool_call("read_file", {"path": "notes.txt"}, id="call_r", chunks=4),
            tool_call("write_file", {"path": "todo.txt", "content": "milk\n"}, id="call_w"),
        ),
        stream(text("Copied the note to todo.txt.")),
    )
    env = {
        "IAC_CODE_PROVIDER": "OpenAI-Compatible",
        "IAC_CODE_BASE_URL": chat.base_url,
        "IAC_CODE_MODEL": "qwen2.5-coder:7b",
        "IAC_CODE_MAX_RETRIES": "0",
    }
    async with spawn(env) as agent:
        agent.client.answers = ["allow_once"]
        init = await agent.initialize()
        assert init.auth_methods == []  # a local server needs no key
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("copy my note")]
        )
    assert result.stop_reason == "end_turn"
    [(asked, _options)] = agent.client.permission_requests  # only the write asks
    assert asked.tool_call_id == "call_w"
    assert (workdir / "todo.txt").read_text() == "milk\n"
    first, second = chat.requests
    assert first.body["model"] == "qwen2.5-coder:7b"
    assert {t["function"]["name"] for t in first.body["tools"]} >= {"read_file", "write_file"}
    answered = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["call_r", "call_w"]
    assert "remember the milk" in answered[0]["content"]
    assert agent.client.agent_text().endswith("Copied the note to todo.txt.")
    all_valid(chat)


@pytest.mark.parametrize(
    ("provider", "key", "model"),
    [
        ("dashscope", "DASHSCOPE_API_KEY", "qwen-plus"),
        ("deepseek", "DEEPSEEK_API_KEY", "deepseek-reasoner"),
    ],
)
async def test_reasoning_streams_as_thoughts(
    spawn: Spawn, workdir: Path, chat: ScriptedOpenAI, provider: str, key: str, model: str
) -> None:
    chat.script(stream(reasoning("The user ", "greets me."), text("Hello!")))
    env = {
        "IAC_CODE_PROVIDER": provider,
        key: "sk-test",
        "IAC_CODE_BASE_URL": chat.base_url,
        "IAC_CODE_MODEL": model,
    }
    async with spawn(env) as agent:
        session = await start(agent, workdir)
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    thoughts = "".join(u.content.text for u in kinds(agent, "agent_thought_chunk"))
    assert thoughts == "The user greets me."
    assert agent.client.agent_text() == "Hello!"
    assert chat.requests[0].headers["authorization"] == "Bearer sk-test"
    all_valid(chat)


async def test_a_session_switches_from_a_claude_model_to_a_qwen_model(
    spawn: Spawn,
    workdir: Path,
    chat: ScriptedOpenAI,
    server: ScriptedAnthropic,
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        f'[providers.dashscope]\nbase_url = "{chat.base_url}"\nmodels = ["qwen3-coder-plus"]\n'
    )
    server.script(claude_stream(claude_text("Claude here.")))
    chat.script(stream(text("Qwen here, continuing.")))
    env = anthropic_env(server, DASHSCOPE_API_KEY="sk-qwen")
    async with spawn(env) as agent:
        session = await start(agent, workdir)
        sid = session.session_id
        [model] = [o for o in session.config_options if o.id == "model"]
        assert "qwen3-coder-plus" in [c.value for c in model.options]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("first")])
        await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="qwen3-coder-plus"
        )
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("second")])
    assert result.stop_reason == "end_turn"
    assert len(server.requests) == 1 and len(chat.requests) == 1
    sent = chat.requests[0].body
    assert sent["model"] == "qwen3-coder-plus"
    assert [(m["role"], m["content"]) for m in chat.requests[0].messages[1:]] == [
        ("user", "first"),
        ("assistant", "Claude here."),
        ("user", "second"),
    ]
    all_valid(chat)


async def test_the_models_prefix_chooses_the_provider(
    spawn: Spawn, workdir: Path, chat: ScriptedOpenAI
) -> None:
    chat.script(stream(text("DeepSeek answering.")))
    env = {
        "IAC_CODE_MODEL": "deepseek-chat",
        "DEEPSEEK_API_KEY": "sk-ds",
        "IAC_CODE_BASE_URL": chat.base_url,
    }
    async with spawn(env) as agent:
        init = await agent.initialize()
        assert init.agent_capabilities.prompt_capabilities.image is False  # DeepSeek reads none
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    [model] = [o for o in session.config_options if o.id == "model"]
    assert model.current_value == "deepseek-chat"
    assert chat.requests[0].headers["authorization"] == "Bearer sk-ds"
    all_valid(chat)
