"""One LLM-port contract, run against every adapter with its real SDK and a scripted server.

Each scenario is written once in terms of a `Backend`: how to script that provider's server
(text, reasoning, tool calls, a stop, an error) and how to build the adapter on it."""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

import tests.support.scripted_anthropic as sa
import tests.support.scripted_openai as so
from adapters.llm.anthropic import AnthropicLLMClient, make_anthropic_client
from adapters.llm.openai_chat import OpenAIChatClient, make_openai_client
from adapters.llm.providers import Dialect
from application.errors import ContextOverflow, ModelAuthFailed
from application.ports.llm import (
    LLMClient,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import TextBlock, ThinkingBlock, ToolUseBlock
from domain.ids import MessageId
from domain.message import Message, Role
from domain.stop_reason import ModelStop
from tests.support.model_chunks import joined

pytestmark = pytest.mark.integration

API_KEY = "contract-key-s3cr3t"
KEY_ENV = "CONTRACT_API_KEY"


@dataclass(frozen=True, slots=True)
class Backend:
    """One adapter and its scripted provider, as the scenarios need them."""

    name: str
    server: Any  # ScriptedAnthropic | ScriptedOpenAI
    make: Callable[[], LLMClient]
    # A streamed reply from parts; `stop` is the port's ModelStop the provider should mean.
    reply: Callable[..., Any]
    text: Callable[..., Any]
    thinking: Callable[..., Any]
    tool: Callable[..., Any]
    rate_limited: Callable[[], Any]
    auth_failed: Callable[[], Any]
    overflow: Callable[[], Any]


_ANTHROPIC_STOPS = {
    ModelStop.END_TURN: "end_turn",
    ModelStop.TOOL_USE: "tool_use",
    ModelStop.MAX_TOKENS: "max_tokens",
    ModelStop.REFUSAL: "refusal",
}
_OPENAI_STOPS = {
    ModelStop.END_TURN: "stop",
    ModelStop.TOOL_USE: "tool_calls",
    ModelStop.MAX_TOKENS: "length",
    ModelStop.REFUSAL: "content_filter",
}


def _anthropic(server: sa.ScriptedAnthropic, clients: list[Any]) -> Backend:
    def make() -> LLMClient:
        client = make_anthropic_client(
            api_key=API_KEY, base_url=server.base_url, max_retries=2, timeout=5.0
        )
        clients.append(client)
        return AnthropicLLMClient(client=client)

    def reply(*parts: Any, stop: ModelStop = ModelStop.END_TURN) -> Any:
        return sa.stream(*parts, stop_reason=_ANTHROPIC_STOPS[stop])

    return Backend(
        name="anthropic",
        server=server,
        make=make,
        reply=reply,
        text=sa.text,
        thinking=sa.thinking,
        tool=lambda name, args, id, chunks: sa.tool_use(name, args, id=id, chunks=chunks),
        rate_limited=sa.rate_limited,
        auth_failed=sa.auth_failed,
        overflow=lambda: sa.http_error(
            400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
        ),
    )


def _openai(server: so.ScriptedOpenAI, clients: list[Any]) -> Backend:
    def make() -> LLMClient:
        client = make_openai_client(
            api_key=API_KEY, base_url=server.base_url, max_retries=2, timeout=5.0
        )
        clients.append(client)
        return OpenAIChatClient(client=client, dialect=Dialect.DASHSCOPE, key_env=KEY_ENV)

    def reply(*parts: Any, stop: ModelStop = ModelStop.END_TURN) -> Any:
        return so.stream(*parts, finish_reason=_OPENAI_STOPS[stop])

    return Backend(
        name="openai",
        server=server,
        make=make,
        reply=reply,
        text=so.text,
        thinking=so.reasoning,
        tool=lambda name, args, id, chunks: so.tool_call(name, args, id=id, chunks=chunks),
        rate_limited=so.rate_limited,
        auth_failed=so.auth_failed,
        overflow=so.context_overflow,
    )


@pytest.fixture(params=["anthropic", "openai"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    clients: list[AsyncAnthropic | AsyncOpenAI] = []
    servers: dict[str, Callable[[], Any]] = {
        "anthropic": sa.ScriptedAnthropic,
        "openai": so.ScriptedOpenAI,
    }
    with servers[request.param]() as server:
        builders: dict[str, Callable[..., Backend]] = {"anthropic": _anthropic, "openai": _openai}
        yield builders[request.param](server, clients)
        server.assert_script_consumed()
    for client in clients:
        await client.close()


def _request() -> ModelRequest:
    message = Message(
        id=MessageId("m1"),
        role=Role.USER,
        content=(TextBlock(text="Hello"),),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return ModelRequest(model="contract-model", system="S", messages=(message,), max_tokens=64)


async def _collect(backend: Backend) -> list[ModelEvent]:
    return [event async for event in backend.make().stream(_request())]


def _final(events: list[ModelEvent]) -> ModelResponse:
    assert sum(isinstance(e, ModelResponse) for e in events) == 1, events
    assert isinstance(events[-1], ModelResponse), events
    return events[-1]


def _texts(events: list[ModelEvent], kind: type) -> list[str]:
    """Each run of chunks of one kind as one text: deltas that arrive together may come as
    one chunk (the Anthropic adapter joins what it read at once), so only runs are fixed."""
    return [e.text for e in joined(list(events)) if isinstance(e, kind)]


def _deltas(events: list[ModelEvent], kind: type) -> int:
    return sum(e.deltas for e in events if isinstance(e, kind))


def _blocks(events: list[ModelEvent], kind: type) -> list[Any]:
    return [b for b in _final(events).content if isinstance(b, kind)]


# --- scenarios --------------------------------------------------------------------------------


async def test_text_streams_in_order_then_one_whole_response(backend: Backend) -> None:
    backend.server.script(backend.reply(backend.text("Hel", "lo, ", "world", "!")))
    events = await _collect(backend)

    assert _texts(events, TextChunk) == ["Hello, world!"]
    assert _deltas(events, TextChunk) == 4  # however they were joined, each is counted
    response = _final(events)
    assert response.content == (TextBlock(text="Hello, world!"),)
    assert response.stop is ModelStop.END_TURN
    assert response.usage.output_tokens == 5


async def test_thinking_streams_as_thinking_chunks_before_the_text(backend: Backend) -> None:
    backend.server.script(
        backend.reply(backend.thinking("Let me ", "think."), backend.text("Answer."))
    )
    events = await _collect(backend)

    assert _texts(events, ThinkingChunk) == ["Let me think."]
    assert _deltas(events, ThinkingChunk) == 2
    assert _texts(events, TextChunk) == ["Answer."]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, ThinkingChunk) for e in events[:first_text])
    assert [b.thinking for b in _blocks(events, ThinkingBlock)] == ["Let me think."]
    assert _blocks(events, TextBlock) == [TextBlock(text="Answer.")]


async def test_a_tool_call_split_across_many_deltas_arrives_whole(backend: Backend) -> None:
    arguments = {"path": "src/main.py", "lines": [1, 2, 3], "note": "ünïcode"}
    backend.server.script(
        backend.reply(
            backend.text("Reading."),
            backend.tool("read_file", arguments, "call_1", 12),
            stop=ModelStop.TOOL_USE,
        )
    )
    events = await _collect(backend)

    response = _final(events)
    assert response.stop is ModelStop.TOOL_USE
    assert _blocks(events, ToolUseBlock) == [
        ToolUseBlock(id="call_1", name="read_file", input=arguments)
    ]


async def test_two_parallel_tool_calls_keep_their_order_and_ids(backend: Backend) -> None:
    backend.server.script(
        backend.reply(
            backend.tool("read_file", {"path": "a"}, "call_a", 3),
            backend.tool("grep", {"pattern": "x", "path": "."}, "call_b", 4),
            stop=ModelStop.TOOL_USE,
        )
    )
    events = await _collect(backend)

    assert _blocks(events, ToolUseBlock) == [
        ToolUseBlock(id="call_a", name="read_file", input={"path": "a"}),
        ToolUseBlock(id="call_b", name="grep", input={"pattern": "x", "path": "."}),
    ]
    assert _final(events).stop is ModelStop.TOOL_USE


async def test_each_tool_call_is_reported_once_as_it_starts(backend: Backend) -> None:
    backend.server.script(
        backend.reply(
            backend.text("Looking."),
            backend.tool("read_file", {"path": "a"}, "call_a", 5),
            backend.tool("grep", {"pattern": "x", "path": "."}, "call_b", 6),
            stop=ModelStop.TOOL_USE,
        )
    )
    events = await _collect(backend)

    started = [e for e in events if isinstance(e, ToolUseStarted)]
    assert started == [
        ToolUseStarted(id="call_a", name="read_file"),
        ToolUseStarted(id="call_b", name="grep"),
    ]
    # Before the response that completes them, and after the text that came first.
    first_start = events.index(started[0])
    assert isinstance(events[first_start - 1], TextChunk)
    assert events.index(started[1]) < len(events) - 1


@pytest.mark.parametrize("stop", [ModelStop.MAX_TOKENS, ModelStop.REFUSAL])
async def test_max_tokens_and_refusal_end_the_response(backend: Backend, stop: ModelStop) -> None:
    backend.server.script(backend.reply(backend.text("Partial"), stop=stop))
    events = await _collect(backend)

    assert _final(events).stop is stop
    assert _final(events).content == (TextBlock(text="Partial"),)


async def test_a_request_over_the_window_is_context_overflow(backend: Backend) -> None:
    backend.server.script(backend.overflow())

    with pytest.raises(ContextOverflow) as caught:
        await _collect(backend)

    assert caught.value.details == {"status": 400}
    assert len(backend.server.requests) == 1  # not retried


async def test_a_rate_limit_then_success_is_retried(backend: Backend) -> None:
    backend.server.script(backend.rate_limited(), backend.reply(backend.text("Recovered")))
    events = await _collect(backend)

    assert _final(events).content == (TextBlock(text="Recovered"),)
    requests = backend.server.requests
    assert len(requests) == 2
    assert requests[0].body == requests[1].body


async def test_a_rejected_key_is_auth_failed_without_the_key(backend: Backend) -> None:
    backend.server.script(backend.auth_failed())

    with pytest.raises(ModelAuthFailed) as caught:
        await _collect(backend)

    assert caught.value.details == {"status": 401}
    assert API_KEY not in str(caught.value)
    assert len(backend.server.requests) == 1


def test_every_backend_is_covered() -> None:
    # The contract is only as good as its list: adding an adapter means adding it here.
    from adapters.llm.providers import PROFILES, Adapter

    speaking = {p.adapter for p in PROFILES} - {Adapter.DEMO}
    assert speaking == {Adapter.ANTHROPIC, Adapter.OPENAI}
