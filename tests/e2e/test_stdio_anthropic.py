"""The real process, the real anthropic SDK, a scripted Messages API on 127.0.0.1."""

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Spawn
from tests.e2e.conftest import anthropic_env as shared_env
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import (
    HANG,
    ScriptedAnthropic,
    api_error,
    assert_valid_cache_markers,
    assert_valid_history,
    overloaded,
    stream,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.e2e


def anthropic_env(server: ScriptedAnthropic, **extra: str) -> dict[str, str]:
    return shared_env(
        server, IAC_CODE_MODELS="claude-test,claude-other", IAC_CODE_MAX_RETRIES="2", **extra
    )


def every_history_valid(server: ScriptedAnthropic) -> None:
    assert server.requests, "the model was never called"
    for request in server.requests:
        assert_valid_history(request.body["messages"])
        assert_valid_cache_markers(request.body)


async def test_a_real_model_turn_streams_thinking_and_text(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(
            thinking("Let me ", "think."),
            text("Hello", ", ", "world"),
            input_tokens=12,
            output_tokens=7,
            cache_read_input_tokens=3,
        )
    )
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("Say hello")]
        )
    assert result.stop_reason == "end_turn"
    assert (
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.usage.cached_read_tokens,
        result.usage.total_tokens,
    ) == (12, 7, 3, 22)
    thoughts = [
        u.content.text for _, u in agent.client.updates if u.session_update == "agent_thought_chunk"
    ]
    assert "".join(thoughts) == "Let me think."
    assert agent.client.agent_text() == "Hello, world"
    sent = server.requests[0]
    assert sent.body["model"] == "claude-test"
    assert sent.messages == [{"role": "user", "content": [{"type": "text", "text": "Say hello"}]}]
    # The prompt's last block (after the turn's environment) ends the cached prefix.
    assert sent.environment and sent.body["messages"][0]["content"][0]["text"].startswith("<env")
    assert sent.cache_markers[-2:] == ["system[0]", "messages[0].content[1]"]
    assert str(workdir) in sent.system
    assert "sk-test-secret" not in agent.stderr()
    server.assert_script_consumed()


async def test_history_with_signed_thinking_goes_back_and_model_choice_applies(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(thinking("hm", signature="sig-1"), text("One")), stream(text("Two")))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("first")])
        await agent.conn.set_config_option(
            config_id="model", session_id=session.session_id, value="claude-other"
        )
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("second")])
    second = server.requests[1].body
    assert second["model"] == "claude-other"
    assert second["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "hm",
        "signature": "sig-1",
    }
    every_history_valid(server)


@pytest.mark.parametrize(
    ("stop", "expected"),
    [("max_tokens", "max_tokens"), ("refusal", "refusal"), ("stop_sequence", "end_turn")],
)
async def test_model_stop_reasons(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, stop: str, expected: str
) -> None:
    server.script(stream(text("partial"), stop_reason=stop))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("x")])
    assert result.stop_reason == expected


async def test_max_turn_requests_ends_a_model_that_keeps_calling_tools(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        *(
            stream(
                tool_use("read_file", {"path": f"f{n}"}),
                stop_reason="tool_use",
                input_tokens=5,
                output_tokens=1,
            )
            for n in range(3)
        )
    )
    async with spawn(anthropic_env(server, IAC_CODE_MAX_TURN_REQUESTS="3")) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("loop")])
    assert result.stop_reason == "max_turn_requests"
    assert result.usage.total_tokens == 18  # usage covers every model call of the turn
    assert len(server.requests) == 3
    every_history_valid(server)
    server.assert_script_consumed()


async def test_cancel_mid_stream_answers_cancelled_and_keeps_the_partial_reply(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("Half of an "), HANG, text("answer")), stream(text("Fresh")))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("long one")])
        )
        await asyncio.to_thread(server.wait_for_hang)
        with pytest.raises(RequestError) as busy:
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("2nd")])
        assert busy.value.code == -32602
        await agent.conn.cancel(session_id=session.session_id)
        result = await asyncio.wait_for(prompt, PATIENCE)
        assert result.stop_reason == "cancelled"
        await asyncio.to_thread(server.wait_for_disconnect)  # the stream was really dropped
        after = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
    assert after.stop_reason == "end_turn"
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": "Half of an "}]
    every_history_valid(server)


async def test_overload_is_retried_then_succeeds(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(overloaded(), stream(text("made it")))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("x")])
    assert result.stop_reason == "end_turn"
    assert len(server.requests) == 2


async def test_a_persistent_provider_failure_is_shown_and_answered_as_an_error(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(api_error(), api_error(), api_error(), stream(text("recovered")))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("x")])
        assert caught.value.code == -32603
        assert caught.value.data["kind"] == "unavailable"
        assert "model provider error" in agent.client.agent_text()
        assert "Traceback" not in str(caught.value)
        # the server keeps serving and the session works again
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("retry")]
        )
    assert result.stop_reason == "end_turn"
    assert len(server.requests) == 4  # 1 try + 2 retries, then the next prompt
    every_history_valid(server)


async def test_the_second_request_of_a_turn_reads_the_prompt_from_the_cache(
    spawn: Spawn, workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("The answer is 42.\n" * 50)
    with ScriptedAnthropic(cache=True) as caching:
        caching.script(
            stream(
                tool_use("read_file", {"path": "notes.txt"}, id="toolu_r"), stop_reason="tool_use"
            ),
            stream(text("It says 42.")),
        )
        async with spawn(anthropic_env(caching)) as agent:
            await agent.initialize()
            session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await agent.conn.prompt(
                session_id=session.session_id, prompt=[text_block("What do the notes say?")]
            )
        caching.assert_script_consumed()
    assert result.stop_reason == "end_turn"
    first, second = (r.usage for r in caching.requests)
    assert first is not None and second is not None
    assert first["cache_read_input_tokens"] == 0
    # The second request repeats the first's tools, system prompt and prompt: read back.
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"] > 0
    assert result.usage.cached_read_tokens == second["cache_read_input_tokens"]
    assert result.usage.cached_write_tokens == (
        first["cache_creation_input_tokens"] + second["cache_creation_input_tokens"]
    )
    for request in caching.requests:
        last = request.body["messages"][-1]["content"]
        assert request.cache_markers[-2:] == [
            "system[0]",
            f"messages[{len(request.messages) - 1}].content[{len(last) - 1}]",
        ]
        assert_valid_cache_markers(request.body)
        assert_valid_history(request.body["messages"])
