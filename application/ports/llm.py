from abc import abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from application.ports.tools import ToolDefinition
from domain.content import AssistantBlock
from domain.message import Message
from domain.stop_reason import ModelStop
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    model: str
    system: str
    messages: tuple[Message, ...]  # already in provider view: alternating, tool uses answered
    max_tokens: int
    tools: tuple[ToolDefinition, ...] = ()
    thinking_budget: int = 0  # extended thinking's budget in tokens; 0: off
    reasoning_effort: str | None = None  # "low" / "medium" / "high" for effort-based models
    attempt: int = 1  # which try at this request (the turn asks again after a failure)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextChunk:
    """Text as it arrived: one of the model's deltas, or several that arrived together
    (an adapter may join those: everything after it then costs once, not per delta)."""

    text: str
    deltas: int = 1  # how many of the model's deltas it holds (a cut reply's usage)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingChunk:
    text: str
    deltas: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseStarted:
    """The model began a tool call (its input follows): the call can be shown at once.
    Yielded once per call, and only with the id its ToolUseBlock will carry."""

    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """The last event of every successful stream: the whole message as the provider sent it."""

    content: tuple[AssistantBlock, ...]
    stop: ModelStop
    usage: Usage


ModelEvent = TextChunk | ThinkingChunk | ToolUseStarted | ModelResponse


class LLMClient(Protocol):
    """Streams one model response.

    Yields text and thinking chunks as they arrive (and ToolUseStarted as a tool call
    begins, where the provider says so early), then exactly one ModelResponse.
    Raises ModelError subclasses, never SDK errors, with the wait the provider asked for
    (`retry_after`) where it said one. Asks once: the turn decides whether to ask again
    (application.agent_loop.provider_retry), and numbers its tries in `request.attempt`.
    """

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...

    @abstractmethod
    def has_credentials(self) -> bool: ...
