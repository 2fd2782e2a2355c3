"""The model's stream read in batches: what arrived while the agent was busy is taken at
once, and the text deltas in it become one chunk (adapters.llm.anthropic_stream)."""

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.llm.anthropic_stream import (
    MAX_READ_AHEAD,
    MessageAssembly,
    StreamFailed,
    gathered,
    model_events,
)
from application.ports.llm import ModelEvent, TextChunk, ThinkingChunk, ToolUseStarted


def sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def start(index: int, block: dict[str, Any]) -> bytes:
    return sse({"type": "content_block_start", "index": index, "content_block": block})


def delta(index: int, kind: str, text: str) -> bytes:
    field = {"text_delta": "text", "thinking_delta": "thinking"}[kind]
    return sse(
        {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: text}}
    )


MESSAGE_START = sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
MESSAGE_STOP = sse({"type": "message_stop"})


async def at_once(*chunks: bytes) -> AsyncIterator[bytes]:
    """A body whose chunks are all there already (the agent was busy while they came)."""
    for chunk in chunks:
        yield chunk


async def events_of(body: AsyncIterator[bytes]) -> list[ModelEvent]:
    return [event async for event in model_events(body, MessageAssembly())]


async def test_chunks_that_wait_together_are_taken_as_one() -> None:
    assert [b async for b in gathered(at_once(b"a", b"b", b"c"))] == [b"abc"]


async def test_a_caller_that_keeps_up_gets_each_chunk_alone() -> None:
    taken = asyncio.Event()

    async def paced() -> AsyncIterator[bytes]:
        for chunk in (b"a", b"b", b"c"):
            yield chunk
            await taken.wait()  # the next chunk comes once this one was taken
            taken.clear()

    seen = []
    async for batch in gathered(paced()):
        seen.append(batch)
        taken.set()
    assert seen == [b"a", b"b", b"c"]


async def test_reading_ahead_is_bounded() -> None:
    piece = 1024
    chunks = [bytes([i % 256]) * piece for i in range(3 * MAX_READ_AHEAD // piece + 3)]
    batches = [b async for b in gathered(at_once(*chunks))]
    assert b"".join(batches) == b"".join(chunks)
    assert len(batches) >= 3
    assert max(len(b) for b in batches) <= MAX_READ_AHEAD


async def test_the_bodys_error_is_raised_after_what_came_before_it() -> None:
    failure = OSError("connection reset")

    async def breaks() -> AsyncIterator[bytes]:
        yield b"first"
        raise failure

    seen = []
    with pytest.raises(OSError, match="connection reset") as caught:
        async for batch in gathered(breaks()):
            seen.append(batch)
    assert seen == [b"first"]
    assert caught.value is failure


async def test_a_caller_that_stops_early_closes_the_body() -> None:
    closed = asyncio.Event()
    more = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        try:
            yield b"first"
            await more.wait()  # never set: the reader is waiting here when the caller stops
            yield b"never"
        finally:
            closed.set()

    batches = gathered(endless())
    assert await anext(batches) == b"first"
    await batches.aclose()
    assert closed.is_set()


async def test_deltas_that_arrive_together_become_one_chunk_counting_them() -> None:
    body = at_once(
        MESSAGE_START,
        start(0, {"type": "thinking", "thinking": ""}),
        delta(0, "thinking_delta", "Let "),
        delta(0, "thinking_delta", "me."),
        start(1, {"type": "text", "text": ""}),
        delta(1, "text_delta", "Hel"),
        delta(1, "text_delta", "lo"),
        start(2, {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}),
        start(3, {"type": "text", "text": ""}),
        delta(3, "text_delta", "!"),
        MESSAGE_STOP,
    )
    assert await events_of(body) == [
        ThinkingChunk(text="Let me.", deltas=2),
        TextChunk(text="Hello", deltas=2),
        ToolUseStarted(id="toolu_1", name="read_file"),  # a run ends where another event is
        TextChunk(text="!"),
    ]


async def test_deltas_that_arrive_apart_stay_apart() -> None:
    taken = asyncio.Event()

    async def paced() -> AsyncIterator[bytes]:
        yield MESSAGE_START + start(0, {"type": "text", "text": ""})
        for piece in ("Hel", "lo"):
            yield delta(0, "text_delta", piece)
            await taken.wait()
            taken.clear()
        yield MESSAGE_STOP

    seen = []
    async for event in model_events(paced(), MessageAssembly()):
        seen.append(event)
        taken.set()
    assert seen == [TextChunk(text="Hel"), TextChunk(text="lo")]


async def test_a_stream_cut_short_still_fails_after_its_batched_text() -> None:
    body = at_once(
        MESSAGE_START, start(0, {"type": "text", "text": ""}), delta(0, "text_delta", "a")
    )
    seen: list[ModelEvent] = []
    with pytest.raises(StreamFailed):
        async for event in model_events(body, MessageAssembly()):
            seen.append(event)
    assert seen == [TextChunk(text="a")]


async def test_the_text_before_an_error_event_in_the_same_batch_is_yielded_first() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = at_once(
        MESSAGE_START,
        start(0, {"type": "text", "text": ""}),
        delta(0, "text_delta", "Hel"),
        delta(0, "text_delta", "lo"),
        sse(error),
    )
    seen: list[ModelEvent] = []
    with pytest.raises(StreamFailed, match="Overloaded"):
        async for event in model_events(body, MessageAssembly()):
            seen.append(event)
    assert seen == [TextChunk(text="Hello", deltas=2)]
