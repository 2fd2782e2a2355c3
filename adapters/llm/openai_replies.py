"""A streamed OpenAI-compatible reply read into our model events: text, reasoning, tool
calls, the stop reason and the usage. A tool call whose arguments are not a JSON object
becomes input ``{INVALID_ARGUMENTS: "<the raw text>"}``: the tool phase answers the model
with an error instead of the turn failing."""

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from application.ports.llm import (
    ModelEvent,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import (
    AssistantBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from domain.stop_reason import ModelStop
from domain.usage import Usage

log = logging.getLogger(__name__)


INVALID_ARGUMENTS: Final = "_invalid_arguments"

_STOPS: Final = {
    "stop": ModelStop.END_TURN,
    "tool_calls": ModelStop.TOOL_USE,
    "function_call": ModelStop.TOOL_USE,
    "length": ModelStop.MAX_TOKENS,
    "content_filter": ModelStop.REFUSAL,
}


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def block(self, index: int) -> ToolUseBlock:
        raw = "".join(self.arguments)
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            log.info("tool call %s came with arguments that are not a JSON object", self.name)
            parsed = {INVALID_ARGUMENTS: raw}
        return ToolUseBlock(id=self.id or f"call_{index}", name=self.name, input=parsed)


@dataclass(slots=True)
class StreamedAnswer:
    """What the stream has said so far."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)

    def take(self, chunk: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if chunk.usage is not None:
            self.usage = usage_from_api(chunk.usage)
        for choice in chunk.choices or ():
            if choice.finish_reason:
                self.finish = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            thought = _reasoning(delta)
            if thought:
                self.thinking.append(thought)
                events.append(ThinkingChunk(text=thought))
            if delta.content:
                self.text.append(delta.content)
                events.append(TextChunk(text=delta.content))
            for call in delta.tool_calls or ():
                if (started := self._take_call(call)) is not None:
                    events.append(started)
        return events

    def _take_call(self, delta: Any) -> ToolUseStarted | None:
        """The call's fragment; ToolUseStarted once both its id and name have come (a
        server that sends no id gets one made up at the end: no early announcement)."""
        call = self.calls.setdefault(delta.index, _Call())
        known = bool(call.id and call.name)
        if delta.id:
            call.id = delta.id
        function = delta.function
        if function is not None:
            if function.name:
                call.name = function.name
            if function.arguments:
                call.arguments.append(function.arguments)
        if not known and call.id and call.name:
            return ToolUseStarted(id=call.id, name=call.name)
        return None

    def response(self) -> ModelResponse:
        content: list[AssistantBlock] = []
        if self.thinking:
            content.append(ThinkingBlock(thinking="".join(self.thinking)))
        if self.text:
            content.append(TextBlock(text="".join(self.text)))
        content += [self.calls[i].block(i) for i in sorted(self.calls)]
        stop = _STOPS.get(self.finish or "stop", ModelStop.END_TURN)
        # Some servers (older vLLM, Ollama) say "stop" after streaming tool calls.
        if self.calls and stop is ModelStop.END_TURN:
            stop = ModelStop.TOOL_USE
        return ModelResponse(content=tuple(content), stop=stop, usage=self.usage)


def _reasoning(delta: Any) -> str | None:
    """DashScope, DeepSeek and vLLM stream `reasoning_content`; Ollama and others `reasoning`.
    Neither is in the SDK's model, which keeps unknown fields as extras."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def usage_from_api(usage: Any) -> Usage:
    prompt = usage.prompt_tokens or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None:  # DeepSeek reports its cache hits in its own field
        cached = getattr(usage, "prompt_cache_hit_tokens", None)
    cached = min(int(cached or 0), prompt)
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
    )
