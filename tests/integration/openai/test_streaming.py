"""OpenAIChatClient turns the chat-completions stream into chunks, usage and the final message."""

import pytest

from adapters.llm.openai_replies import INVALID_ARGUMENTS
from adapters.llm.providers import Dialect
from application.ports.llm import ModelResponse, ThinkingChunk
from domain.content import TextBlock, ThinkingBlock, ToolUseBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.integration.openai.support import MODEL, MakeLLM, collect, final
from tests.support.scripted_openai import RawSSE, ScriptedOpenAI, reasoning, stream, text, tool_call

pytestmark = pytest.mark.integration


async def test_usage_counts_cached_prompt_tokens_apart(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hi"), prompt_tokens=1200, completion_tokens=7, cached_tokens=1000))
    events = await collect(await make_llm())

    assert final(events).usage == Usage(input_tokens=200, output_tokens=7, cache_read_tokens=1000)
    assert server.last_request.body["stream_options"] == {"include_usage": True}


async def test_deepseek_cache_hits_count_as_cache_reads(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    server.script(
        RawSSE(
            payloads=[
                {**chunk, "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {
                    **chunk,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": 50,
                        "completion_tokens": 2,
                        "total_tokens": 52,
                        "prompt_cache_hit_tokens": 40,
                        "prompt_cache_miss_tokens": 10,
                    },
                },
                "[DONE]",
            ]
        )
    )
    events = await collect(await make_llm(dialect=Dialect.DEEPSEEK))

    assert final(events).usage == Usage(input_tokens=10, output_tokens=2, cache_read_tokens=40)


async def test_a_stream_without_usage_or_finish_reason_still_ends(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    server.script(
        RawSSE(payloads=[{**chunk, "choices": [{"index": 0, "delta": {"content": "ok"}}]}])
    )
    events = await collect(await make_llm())

    assert final(events) == ModelResponse(
        content=(TextBlock(text="ok"),), stop=ModelStop.END_TURN, usage=Usage()
    )


async def test_the_reasoning_field_of_ollama_is_thinking_too(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(stream(reasoning("Hmm", ".", field="reasoning"), text("Done")))
    events = await collect(await make_llm(dialect=Dialect.GENERIC))

    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["Hmm", "."]
    assert final(events).content == (ThinkingBlock(thinking="Hmm."), TextBlock(text="Done"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.py"', {INVALID_ARGUMENTS: '{"path": "a.py"'}),
        ("[1, 2]", {INVALID_ARGUMENTS: "[1, 2]"}),
        ("", {}),
    ],
    ids=["truncated", "not-an-object", "empty"],
)
async def test_tool_arguments_that_are_not_a_json_object_do_not_fail_the_stream(
    server: ScriptedOpenAI, make_llm: MakeLLM, raw: str, expected: dict[str, object]
) -> None:
    server.script(stream(tool_call("read_file", raw, id="call_x", chunks=2)))
    events = await collect(await make_llm())

    assert final(events).content == (ToolUseBlock(id="call_x", name="read_file", input=expected),)
    assert final(events).stop is ModelStop.TOOL_USE


async def test_tool_calls_after_a_stop_finish_still_continue_the_turn(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    # Some servers (older vLLM, Ollama) finish with "stop" after streaming tool calls.
    server.script(stream(tool_call("ls", {"path": "."}), finish_reason="stop"))
    events = await collect(await make_llm())

    assert final(events).stop is ModelStop.TOOL_USE
