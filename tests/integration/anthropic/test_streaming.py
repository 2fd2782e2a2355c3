"""AnthropicLLMClient turns the Messages API's events into chunks and the final message."""

import asyncio
import threading
from dataclasses import replace

import pytest

from application.ports.llm import ModelResponse, TextChunk, ThinkingChunk
from domain.content import RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolUseBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.integration.anthropic.support import MakeLLM, chunks, collect, final, request
from tests.support.model_chunks import joined
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import (
    HANG,
    ScriptedAnthropic,
    redacted_thinking,
    stream,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.integration


async def test_text_deltas_arrive_in_order_then_the_whole_message(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hel", "lo, ", "world", "!"), input_tokens=12, output_tokens=4))
    events = await collect(await make_llm())

    assert joined(events[:-1]) == [TextChunk(text="Hello, world!", deltas=4)]
    assert final(events) == ModelResponse(
        content=(TextBlock(text="Hello, world!"),),
        stop=ModelStop.END_TURN,
        usage=Usage(input_tokens=12, output_tokens=4),
    )


async def test_chunks_are_yielded_while_the_stream_is_still_open(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    # The server holds the rest of the message back until the first chunk has arrived:
    # an adapter that buffered the stream would never yield it.
    release = threading.Event()
    server.script(stream(text("a"), HANG, text("b", "c"), release=release))
    llm = await make_llm()
    events = llm.stream(request())
    first = await asyncio.wait_for(anext(events), PATIENCE)
    assert first == TextChunk(text="a")
    assert not release.is_set()
    release.set()
    rest = [event async for event in events]
    assert joined(rest[:-1]) == [TextChunk(text="bc", deltas=2)]
    assert isinstance(rest[-1], ModelResponse)


async def test_thinking_deltas_then_text_and_signature_kept(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(
        stream(
            thinking("Let me ", "think.", signature="EqQBCgIYAhIM-signature"),
            redacted_thinking("ZW5jcnlwdGVk"),
            text("Answer."),
        )
    )
    thinks = replace(request(max_tokens=4096), thinking_budget=2048)
    events = await collect(await make_llm(), thinks)

    assert joined(events[:-1]) == [
        ThinkingChunk(text="Let me think.", deltas=2),
        TextChunk(text="Answer."),
    ]
    assert final(events).content == (
        ThinkingBlock(thinking="Let me think.", signature="EqQBCgIYAhIM-signature"),
        RedactedThinkingBlock(data="ZW5jcnlwdGVk"),
        TextBlock(text="Answer."),
    )
    assert server.last_request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert server.last_request.body["max_tokens"] == 4096


async def test_no_thinking_is_asked_for_without_a_budget(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hi.")))
    await collect(await make_llm())
    assert "thinking" not in server.last_request.body


@pytest.mark.parametrize(
    ("api_stop", "stop"),
    [
        ("end_turn", ModelStop.END_TURN),
        ("stop_sequence", ModelStop.END_TURN),
        ("max_tokens", ModelStop.MAX_TOKENS),
        ("model_context_window_exceeded", ModelStop.MAX_TOKENS),
        ("refusal", ModelStop.REFUSAL),
        ("pause_turn", ModelStop.PAUSE),
    ],
)
async def test_stop_reason_mapping(
    server: ScriptedAnthropic, make_llm: MakeLLM, api_stop: str, stop: ModelStop
) -> None:
    server.script(stream(text("partial"), stop_reason=api_stop))
    events = await collect(await make_llm())

    assert final(events).stop is stop
    assert final(events).content == (TextBlock(text="partial"),)


async def test_tool_use_block_with_streamed_json_input(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    tool_input = {"path": "src/main.tf", "lines": [1, 20], "options": {"follow": True}}
    server.script(
        stream(
            text("I'll read it."),
            tool_use("read_file", tool_input, id="toolu_01ABC", chunks=5),
            tool_use("list_dir", {}, id="toolu_02DEF"),
            stop_reason="tool_use",
        )
    )
    events = await collect(await make_llm())

    assert chunks(events, TextChunk) == ["I'll read it."]
    response = final(events)
    assert response.stop is ModelStop.TOOL_USE
    assert response.content == (
        TextBlock(text="I'll read it."),
        ToolUseBlock(id="toolu_01ABC", name="read_file", input=tool_input),
        ToolUseBlock(id="toolu_02DEF", name="list_dir", input={}),
    )


async def test_cache_token_usage(server: ScriptedAnthropic, make_llm: MakeLLM) -> None:
    server.script(
        stream(
            text("cached"),
            input_tokens=25,
            output_tokens=7,
            cache_read_input_tokens=1800,
            cache_creation_input_tokens=240,
        ),
        stream(text("no cache fields"), input_tokens=3, output_tokens=2),
    )
    llm = await make_llm()

    assert final(await collect(llm)).usage == Usage(
        input_tokens=25, output_tokens=7, cache_read_tokens=1800, cache_write_tokens=240
    )
    assert final(await collect(llm)).usage == Usage(input_tokens=3, output_tokens=2)
