"""An offline model: deterministic replies, no network, no key. For trying the server out."""

import asyncio
from collections.abc import AsyncIterator

from application.ports.llm import (
    LLMClient,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
)
from domain.content import TextBlock, ThinkingBlock
from domain.message import Role
from domain.stop_reason import ModelStop
from domain.usage import Usage

DEMO_MODEL = "demo"


class DemoLLMClient(LLMClient):
    """Answers every prompt by describing what it received, streamed word by word."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self._delay = delay

    def has_credentials(self) -> bool:
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1] if request.messages else None
        said = last.visible_text().strip() if last and last.role is Role.USER else ""
        thinking = "The demo model has no reasoning to do; it echoes the prompt."
        reply = (
            f"This is the offline demo model (set IAC_CODE_PROVIDER=anthropic for a real "
            f"one). You said: {said or '(nothing)'}"
        )
        yield ThinkingChunk(text=thinking)
        for word in _words(reply):
            if self._delay:
                await asyncio.sleep(self._delay)
            yield TextChunk(text=word)
        prompt_words = sum(len(m.visible_text().split()) for m in request.messages)
        yield ModelResponse(
            content=(ThinkingBlock(thinking=thinking, signature="demo"), TextBlock(text=reply)),
            stop=ModelStop.END_TURN,
            usage=Usage(input_tokens=prompt_words, output_tokens=len(reply.split())),
        )


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + words[-1:]
