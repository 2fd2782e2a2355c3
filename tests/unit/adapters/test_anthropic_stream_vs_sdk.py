"""The adapter's own reading of the event stream against the SDK's MessageStream.

Both read the same response bytes (served by an httpx mock transport, split into random
reads): the SDK path is the adapter as it was before it read the bytes itself, so every
difference in the deltas, the final blocks, the stop reason, the usage or the error is a
change the client would see.
"""

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2 as httpx
import pytest
from anthropic import AsyncAnthropic
from hypothesis import given
from hypothesis import strategies as st

from adapters.llm.anthropic import AnthropicLLMClient, translate_error
from application.errors import ModelError
from application.ports.llm import (
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import (
    AssistantBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.support.model_chunks import joined

pytestmark = pytest.mark.fuzz

REQUEST = ModelRequest(model="claude-test", system="", messages=(), max_tokens=100)
_STOPS = {
    "end_turn": ModelStop.END_TURN,
    "stop_sequence": ModelStop.END_TURN,
    "max_tokens": ModelStop.MAX_TOKENS,
    "refusal": ModelStop.REFUSAL,
    "tool_use": ModelStop.TOOL_USE,
    "pause_turn": ModelStop.PAUSE,
}


# --- the SDK's reading, as the adapter did it before (main, adapters/llm/anthropic.py) ---


def _blocks(message: Any) -> tuple[AssistantBlock, ...]:
    blocks: list[AssistantBlock] = []
    for block in message.content:
        match block.type:
            case "text":
                blocks.append(TextBlock(text=block.text))
            case "thinking":
                blocks.append(ThinkingBlock(thinking=block.thinking, signature=block.signature))
            case "redacted_thinking":
                blocks.append(RedactedThinkingBlock(data=block.data))
            case "tool_use":
                blocks.append(
                    ToolUseBlock(id=block.id, name=block.name, input=dict(block.input or {}))
                )
    return tuple(blocks)


def _usage(message: Any) -> Usage:
    u = message.usage
    return Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_read_tokens=u.cache_read_input_tokens or 0,
        cache_write_tokens=u.cache_creation_input_tokens or 0,
    )


async def sdk_read(client: AsyncAnthropic) -> list[object]:
    out: list[object] = []
    try:
        async with client.messages.stream(
            model="claude-test", max_tokens=100, messages=[]
        ) as stream:
            async for event in stream:
                if event.type == "text":
                    out.append(TextChunk(text=event.text))
                elif event.type == "thinking":
                    out.append(ThinkingChunk(text=event.thinking))
                elif event.type == "content_block_start" and event.content_block.type == "tool_use":
                    block = event.content_block
                    out.append(ToolUseStarted(id=block.id, name=block.name))
            final = await stream.get_final_message()
    except anthropic.AnthropicError as exc:
        out.append(_error(translate_error(exc)))
        return out
    stop = _STOPS.get(final.stop_reason or "end_turn", ModelStop.END_TURN)
    out.append(ModelResponse(content=_blocks(final), stop=stop, usage=_usage(final)))
    return out


async def adapter_read(client: AsyncAnthropic) -> list[object]:
    out: list[object] = []
    try:
        async for event in AnthropicLLMClient(client=client).stream(REQUEST):
            out.append(event)
    except ModelError as exc:
        out.append(_error(exc))
    return out


def _error(exc: ModelError) -> tuple[str, str]:
    """What a caller tells apart: the class and the provider's words (not the parenthesis
    before them: the SDK put the stream's 200 there, which was never the error's status)."""
    return type(exc).__name__, str(exc).partition("): ")[2]


def client_serving(body: bytes, cuts: list[int]) -> AsyncAnthropic:
    bounds = [0, *sorted(c % (len(body) + 1) for c in cuts), len(body)]

    async def reads() -> AsyncIterator[bytes]:
        for a, b in itertools.pairwise(bounds):
            if body[a:b]:
                yield body[a:b]

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for piece in reads():
                yield piece

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return AsyncAnthropic(api_key="k", http_client=http, max_retries=0)


def both(body: bytes, cuts: list[int]) -> tuple[list[object], list[object]]:
    async def run() -> tuple[list[object], list[object]]:
        return (
            await sdk_read(client_serving(body, cuts)),
            await adapter_read(client_serving(body, cuts)),
        )

    return asyncio.run(run())


# --- random event streams ---

# Any code point, lone surrogates too: the API escapes them ("\\ud83d", half an emoji).
TEXT = st.text(st.characters(exclude_categories=()) | st.sampled_from("\ud83d\udfff"), max_size=6)
TOKENS = st.integers(min_value=0, max_value=10**6)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


def message_start(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }


def sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


@st.composite
def block_events(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(["text", "thinking", "redacted_thinking", "tool_use"]))
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": draw(st.sampled_from(["", "pre "]))}
        deltas = [{"type": "text_delta", "text": t} for t in draw(st.lists(TEXT, max_size=5))]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": t} for t in draw(st.lists(TEXT, max_size=5))
        ]
        if draw(st.booleans()):
            deltas.append({"type": "signature_delta", "signature": draw(st.text(min_size=1))})
    elif kind == "redacted_thinking":
        start = {"type": "redacted_thinking", "data": draw(st.text(min_size=1, max_size=8))}
    else:
        start = {"type": "tool_use", "id": f"toolu_{index}", "name": "read", "input": {}}
        value = draw(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3))
        whole = json.dumps(value, ensure_ascii=draw(st.booleans()))
        cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=4)))
        bounds = [0, *cuts, len(whole)]
        pieces = [whole[a:b] for a, b in itertools.pairwise(bounds)]
        if draw(st.booleans()):
            pieces.insert(0, "")  # the API's first input_json_delta is often empty
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


@st.composite
def message_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    start_usage = {
        "input_tokens": draw(TOKENS),
        "output_tokens": draw(st.integers(0, 5)),
        "cache_creation_input_tokens": draw(st.none() | TOKENS),
        "cache_read_input_tokens": draw(st.none() | TOKENS),
    }
    events: list[dict[str, Any]] = [message_start(start_usage)]
    for index in range(draw(st.integers(0, 4))):
        events += draw(block_events(index))
    delta_usage: dict[str, Any] = {"output_tokens": draw(TOKENS)}
    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        if draw(st.booleans()):
            delta_usage[key] = draw(st.none() | TOKENS)
    stop = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": delta_usage,
        }
    )
    events.append({"type": "message_stop"})
    pings = draw(st.lists(st.integers(0, len(events)), max_size=3))
    for at in sorted(pings, reverse=True):
        events.insert(at, {"type": "ping"})
    return events


CUTS = st.lists(st.integers(min_value=0), max_size=12)


@given(message_events(), CUTS)
def test_the_adapter_reads_a_stream_as_the_sdk_did(
    events: list[dict[str, Any]], cuts: list[int]
) -> None:
    body = b"".join(sse(e) for e in events)

    sdk, adapter = both(body, cuts)

    assert joined(adapter) == joined(sdk)


ERRORS = st.sampled_from(
    [
        ("overloaded_error", "Overloaded"),
        ("api_error", "Internal server error"),
        ("rate_limit_error", "slow down"),
        ("invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum"),
        ("invalid_request_error", "bad"),
        ("authentication_error", "nope"),
        ("permission_error", "nope"),
    ]
)


@given(message_events(), st.integers(min_value=1), ERRORS, CUTS)
def test_an_error_event_mid_stream_fails_as_the_sdk_did(
    events: list[dict[str, Any]], at: int, error: tuple[str, str], cuts: list[int]
) -> None:
    error_type, message = error
    failure = {"type": "error", "error": {"type": error_type, "message": message}}
    events = [*events[: 1 + at % len(events)], failure]
    body = b"".join(sse(e) for e in events)

    sdk, adapter = both(body, cuts)

    assert joined(adapter) == joined(sdk)


@given(
    st.dictionaries(st.text(max_size=4), JSON_VALUES, min_size=1, max_size=3),
    st.integers(min_value=1),
    CUTS,
)
def test_tool_input_cut_off_by_max_tokens_reads_as_the_sdk_did(
    value: dict[str, Any], cut: int, cuts: list[int]
) -> None:
    whole = json.dumps(value)
    partial = whole[: 1 + cut % (len(whole) - 1)]  # never the whole: the model ran out
    tool_block = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    events = with_blocks(tool_block, stop_reason="max_tokens", output_tokens=100)
    body = b"".join(sse(e) for e in events)

    sdk, adapter = both(body, cuts)

    assert joined(adapter) == joined(sdk)


def with_blocks(
    *blocks: list[dict[str, Any]], stop_reason: str = "end_turn", output_tokens: int = 7
) -> list[dict[str, Any]]:
    start = message_start({"input_tokens": 3, "output_tokens": 1})
    stop = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    return [start, *(e for block in blocks for e in block), stop, {"type": "message_stop"}]


@pytest.mark.parametrize("lone", [chr(0xD83D), chr(0xDFFF)], ids=["high", "low"])
@pytest.mark.parametrize("kind", ["text", "thinking"])
def test_a_lone_surrogate_from_the_model_reads_as_the_sdk_read_it(lone: str, kind: str) -> None:
    """The API escapes it ("\\ud83d": half an emoji), which is valid JSON; the SDK read it
    with json.loads and later layers repair it."""
    field = "text" if kind == "text" else "thinking"
    start = {"type": kind, field: "", **({"signature": ""} if kind == "thinking" else {})}
    block = [
        {"type": "content_block_start", "index": 0, "content_block": start},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": f"{field}_delta", field: f"bad {lone} text"},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    body = b"".join(sse(e) for e in with_blocks(block))

    sdk, adapter = both(body, [])

    assert adapter == sdk
