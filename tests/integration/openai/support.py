"""Requests, conversations and event readers the OpenAIChatClient tests share."""

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from adapters.llm.openai_chat import OpenAIChatClient
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse
from domain.content import TextBlock
from domain.ids import MessageId
from domain.message import Message, Role

API_KEY = "sk-test-key-s3cr3t"
KEY_ENV = "DASHSCOPE_API_KEY"
MODEL = "qwen-test"
MAX_RETRIES = 2

MakeLLM = Callable[..., Awaitable[OpenAIChatClient]]


def message(role: Role, *blocks: object, n: int = 1) -> Message:
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def request(*messages: Message, **options: object) -> ModelRequest:
    if not messages:
        messages = (message(Role.USER, TextBlock(text="Hello")),)
    return ModelRequest(
        model=MODEL,
        system="You are iac-code.",
        messages=messages,
        max_tokens=options.pop("max_tokens", 1024),  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )


async def collect(llm: OpenAIChatClient, req: ModelRequest | None = None) -> list[ModelEvent]:
    return [event async for event in llm.stream(req or request())]


def final(events: list[ModelEvent]) -> ModelResponse:
    assert isinstance(events[-1], ModelResponse), events
    return events[-1]
