"""The offline demo model streams like a real model: thinking, text, the call, one response."""

import asyncio
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.llm.demo import DemoLLMClient, tokens
from application.ports.llm import (
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import TextBlock, ThinkingBlock, ToolUseBlock
from domain.stop_reason import ModelStop
from tests.unit.adapters.demo_model.support import (
    after,
    events,
    said,
    use,
)


async def test_the_stream_is_thinking_then_text_then_the_call_then_one_response() -> None:
    streamed = await events([said("read README.md")])
    kinds = [type(e) for e in streamed]
    first_text = kinds.index(TextChunk)
    assert set(kinds[:first_text]) == {ThinkingChunk}
    assert set(kinds[first_text:-2]) == {TextChunk}
    started = streamed[-2]
    response = streamed[-1]
    assert isinstance(response, ModelResponse) and response.stop is ModelStop.TOOL_USE
    thinking, text, call = response.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking == "".join(e.text for e in streamed if isinstance(e, ThinkingChunk))
    assert text.text == "".join(e.text for e in streamed if isinstance(e, TextChunk))
    assert isinstance(call, ToolUseBlock) and call.name == "read_file"
    assert started == ToolUseStarted(id=call.id, name=call.name)  # announced before it ends
    assert len([e for e in streamed if isinstance(e, TextChunk)]) == len(text.text.split())
    # Usage counts words: the reply's, and the prompt's (system prompt included).
    assert response.usage.input_tokens == 6  # "You are a test." + "read README.md"
    assert response.usage.output_tokens == (
        len(thinking.thinking.split()) + len(text.text.split()) + 2  # tool name + path
    )


async def test_a_reply_without_tools_ends_the_turn() -> None:
    response = (await events([said("help")]))[-1]
    assert isinstance(response, ModelResponse) and response.stop is ModelStop.END_TURN


async def test_the_same_history_gives_the_same_stream() -> None:
    call = use("list_files", path=".")
    for history in ([said("plan a release")], after(call, "a.py\nb.py")):
        assert await events(history) == await events(history)


async def test_the_pace_spaces_out_every_token(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    streamed = await events([said("help")], pace=50)
    chunks = [e for e in streamed if isinstance(e, TextChunk | ThinkingChunk)]
    assert pauses == [pytest.approx(1 / 50)] * len(chunks)


async def test_pace_zero_streams_without_pausing(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(seconds: float) -> Iterator[None]:
        raise AssertionError("pace 0 must not sleep")

    monkeypatch.setattr(asyncio, "sleep", forbidden)
    assert isinstance((await events([said("help")], pace=0))[-1], ModelResponse)


def test_a_negative_pace_is_refused() -> None:
    with pytest.raises(ValueError, match="pace"):
        DemoLLMClient(pace=-1)


@pytest.mark.fuzz
@given(st.text())
def test_tokens_join_back_to_the_text(text: str) -> None:
    pieces = tokens(text)
    assert "".join(pieces) == text
    assert all(piece.strip() or piece is pieces[-1] for piece in pieces)
