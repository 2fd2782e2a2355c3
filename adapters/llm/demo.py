"""An offline model: a scripted agent, no network, no key. For trying the server out.

It understands a few plain requests (see `demo_script`), calls the real tools for them
(so permission requests appear) and streams like a real model: a thought, then the reply
token by token at a configurable pace, slow enough by default for `session/cancel`."""

import asyncio
import re
from collections.abc import AsyncIterator, Iterable

from adapters.llm.demo_script import next_step
from adapters.llm.demo_steps import Step
from application.ports.llm import (
    LLMClient,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import (
    AssistantBlock,
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.stop_reason import ModelStop
from domain.usage import Usage

DEMO_MODEL = "demo"
DEFAULT_PACE = 40.0  # tokens per second: about a real model's streaming speed


class DemoLLMClient(LLMClient):
    """Answers with the script's next step; `pace` is tokens per second, 0 for at once."""

    def __init__(self, *, pace: float = DEFAULT_PACE) -> None:
        if not pace >= 0:
            raise ValueError("pace must be 0 or more tokens per second")
        self._interval = 1 / pace if pace else 0.0

    def has_credentials(self) -> bool:
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        step = next_step(request.messages, {tool.name for tool in request.tools})
        for token in tokens(step.thinking):
            await self._pause()
            yield ThinkingChunk(text=token)
        for token in tokens(step.text):
            await self._pause()
            yield TextChunk(text=token)
        if step.tool is not None:
            await self._pause()
            yield ToolUseStarted(id=step.tool.id, name=step.tool.name)
        blocks = _blocks(step)
        yield ModelResponse(
            content=blocks,
            stop=ModelStop.END_TURN if step.tool is None else ModelStop.TOOL_USE,
            usage=Usage(input_tokens=_prompt_words(request), output_tokens=_words(blocks)),
        )

    async def _pause(self) -> None:
        if self._interval:
            await asyncio.sleep(self._interval)


def tokens(text: str) -> list[str]:
    """Words with their leading whitespace, as models stream them; they join back to `text`."""
    return re.findall(r"\s*\S+|\s+$", text)


def _blocks(step: Step) -> tuple[AssistantBlock, ...]:
    # The signature stands in for the provider's: stored thinking is only resent with one.
    blocks: list[AssistantBlock] = [ThinkingBlock(thinking=step.thinking, signature="demo")]
    if step.text:
        blocks.append(TextBlock(text=step.text))
    if step.tool is not None:
        blocks.append(step.tool)
    return tuple(blocks)


def _prompt_words(request: ModelRequest) -> int:
    return len(request.system.split()) + sum(_words(m.content) for m in request.messages)


def _words(blocks: Iterable[ContentBlock]) -> int:
    """Plausible token counts: one a word (a tool call's name counts as one)."""
    words = 0
    for block in blocks:
        match block:
            case (
                TextBlock(text=text) | ThinkingBlock(thinking=text) | ToolResultBlock(content=text)
            ):
                words += len(text.split())
            case ToolUseBlock(input=arguments):
                words += 1 + sum(len(str(v).split()) for v in arguments.values())
    return words
