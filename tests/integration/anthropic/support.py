"""Requests, conversations and event readers the AnthropicLLMClient tests share."""

import base64
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from adapters.llm.anthropic import AnthropicLLMClient
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse
from domain.content import TextBlock
from domain.ids import MessageId
from domain.message import Message, Role

API_KEY = "test-key-s3cr3t"
MODEL = "claude-test-model"
SYSTEM = "You are iac-code."
MAX_RETRIES = 2

MakeLLM = Callable[..., Awaitable[AnthropicLLMClient]]

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(64)).decode()


def message(role: Role, *blocks: object, n: int = 1, interrupted: bool = False) -> Message:
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        interrupted=interrupted,
    )


def request(*messages: Message, max_tokens: int = 1024) -> ModelRequest:
    if not messages:
        messages = (message(Role.USER, TextBlock(text="Hello")),)
    return ModelRequest(model=MODEL, system=SYSTEM, messages=messages, max_tokens=max_tokens)


async def collect(llm: AnthropicLLMClient, req: ModelRequest | None = None) -> list[ModelEvent]:
    return [event async for event in llm.stream(req or request())]


async def drain(llm: AnthropicLLMClient, into: list[ModelEvent]) -> None:
    """Like collect, but what arrived before an exception stays in `into`."""
    async for event in llm.stream(request()):
        into.append(event)


def final(events: list[ModelEvent]) -> ModelResponse:
    assert isinstance(events[-1], ModelResponse), events
    assert sum(isinstance(e, ModelResponse) for e in events) == 1, events
    return events[-1]


def chunks(events: list[ModelEvent], kind: type) -> list[str]:
    return [e.text for e in events if isinstance(e, kind)]
