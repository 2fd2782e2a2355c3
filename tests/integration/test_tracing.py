"""Trace context through the real protocol agent (container, SQLite or PostgreSQL, use
cases): a prompt carrying W3C `traceparent`/`tracestate` in `_meta` yields spans in the
client's trace, the turn under the request's span, the model requests, tool calls and
storage under the turn. Spans go to the SDK's in-memory exporter."""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.connection import Connection
from adapters.protocol.traced import TracedDispatcher
from adapters.tracing.otel import OtelTracer
from application.ports.llm import LLMClient, ModelEvent, ModelRequest, ModelResponse, TextChunk
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from domain.content import TextBlock, ToolUseBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACESTATE = "vendor=abc,other=xyz"


class ToolThenAnswer(LLMClient):
    """First request: one read_file call; second: an answer."""

    def __init__(self) -> None:
        self.requests = 0

    def has_credentials(self) -> bool:
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests += 1
        if self.requests == 1:
            use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": "notes.txt"})
            usage = Usage(input_tokens=10, output_tokens=5)
            yield ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=usage)
            return
        yield TextChunk(text="read it")
        yield ModelResponse(
            content=(TextBlock(text="read it"),),
            stop=ModelStop.END_TURN,
            usage=Usage(input_tokens=20, output_tokens=3),
        )


class Peer:
    def __init__(self, dispatcher: Any) -> None:
        self.connection = Connection(self._send, dispatcher)
        self._ids = iter(range(1, 10**6))
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def _send(self, message: dict[str, Any]) -> None:
        future = self._replies.get(message.get("id"))  # type: ignore[arg-type]
        if "method" not in message and future is not None and not future.done():
            future.set_result(message)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        future = self._replies[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.connection.receive(json.dumps(message))
        return await asyncio.wait_for(future, PATIENCE)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
async def peer(
    tmp_path: Path, exporter: InMemorySpanExporter, database_url: str
) -> AsyncIterator[tuple[Peer, Path]]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(provider="demo", config_dir=tmp_path / "config", database_url=database_url)
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    container.llm.override(providers.Object(ToolThenAnswer()))
    container.tracer.override(providers.Object(OtelTracer(provider)))
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("hello\n")
    client = Peer(TracedDispatcher(container.agent(), OtelTracer(provider)))
    yield client, cwd
    await client.connection.close()
    await release(container)
    provider.shutdown()


def _prompt(sid: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": sid, "prompt": [{"type": "text", "text": "read"}]}
    if meta is not None:
        params["_meta"] = meta
    return params


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def _descends_from(span: ReadableSpan, ancestor: ReadableSpan, spans: list[ReadableSpan]) -> bool:
    by_id = {s.context.span_id: s for s in spans}
    parent = span.parent
    while parent is not None:
        if parent.span_id == ancestor.context.span_id:
            return True
        above = by_id.get(parent.span_id)
        parent = above.parent if above is not None else None
    return False


async def _new_session(client: Peer, cwd: Path) -> str:
    answer = await client.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(answer["result"]["sessionId"])


async def test_a_prompt_continues_the_clients_trace(peer, exporter, backend) -> None:  # type: ignore[no-untyped-def]
    client, cwd = peer
    sid = await _new_session(client, cwd)
    exporter.clear()

    meta = {"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
    answer = await client.call("session/prompt", _prompt(sid, meta))
    assert answer["result"]["stopReason"] == "end_turn"

    spans = list(exporter.get_finished_spans())
    request = _one(spans, "session/prompt")
    assert request.kind is SpanKind.SERVER
    assert f"{request.context.trace_id:032x}" == TRACE_ID
    assert request.parent is not None and f"{request.parent.span_id:016x}" == PARENT_ID
    assert request.parent.is_remote
    assert request.attributes == {
        "rpc.system": "jsonrpc",
        "rpc.method": "session/prompt",
        "session.id": sid,
    }
    assert request.context.trace_state.to_header() == TRACESTATE

    turn = _one(spans, "turn")
    assert turn.parent is not None and turn.parent.span_id == request.context.span_id
    assert turn.attributes is not None
    assert turn.attributes["session.id"] == sid
    assert turn.attributes["acp.stop_reason"] == "end_turn"
    assert turn.attributes["gen_ai.usage.input_tokens"] == 30
    assert turn.attributes["gen_ai.usage.output_tokens"] == 8

    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 2
    assert all(s.parent is not None and s.parent.span_id == turn.context.span_id for s in chats)
    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["gen_ai.request.model"] == first.name.removeprefix("chat ")
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert first.attributes["gen_ai.usage.input_tokens"] == 10
    assert second.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert second.attributes["gen_ai.usage.output_tokens"] == 3

    tool = _one(spans, "execute_tool read_file")
    assert tool.parent is not None and tool.parent.span_id == turn.context.span_id
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.tool.name"] == "read_file"
    assert tool.attributes["gen_ai.tool.call.id"] == "toolu_1"
    assert tool.attributes["iac_code.tool.is_error"] is False
    assert tool.status.status_code is StatusCode.UNSET

    storage = [s for s in spans if s.name == "storage transaction"]
    assert storage, [s.name for s in spans]
    assert all(_descends_from(s, turn, spans) for s in storage)
    system = {"sqlite": "sqlite", "postgres": "postgresql"}[backend]
    assert all(s.attributes and s.attributes["db.system.name"] == system for s in storage)
    assert any(s.attributes and s.attributes.get("iac_code.storage.committed") for s in storage)

    # Every span of the turn is in the client's trace and carries its tracestate.
    assert {f"{s.context.trace_id:032x}" for s in spans} == {TRACE_ID}
    assert {s.context.trace_state.to_header() for s in spans} == {TRACESTATE}


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"traceparent": "not-a-traceparent"},
        {"traceparent": f"00-{'0' * 32}-{PARENT_ID}-01"},  # an all-zero trace id is invalid
        {"traceparent": 42, "tracestate": TRACESTATE},
        {"tracestate": TRACESTATE},
    ],
)
async def test_without_a_valid_traceparent_the_request_is_a_new_root(peer, exporter, meta) -> None:  # type: ignore[no-untyped-def]
    client, cwd = peer
    sid = await _new_session(client, cwd)
    exporter.clear()

    answer = await client.call("session/prompt", _prompt(sid, meta))
    assert answer["result"]["stopReason"] == "end_turn"  # no error for the client

    spans = list(exporter.get_finished_spans())
    request = _one(spans, "session/prompt")
    assert request.parent is None
    assert f"{request.context.trace_id:032x}" != TRACE_ID
    assert _one(spans, "turn").parent.span_id == request.context.span_id  # type: ignore[union-attr]
    assert {s.context.trace_id for s in spans} == {request.context.trace_id}


async def test_a_failed_request_is_recorded_on_its_span(peer, exporter) -> None:  # type: ignore[no-untyped-def]
    client, _ = peer
    answer = await client.call(
        "session/prompt", _prompt("no-such-session", {"traceparent": TRACEPARENT})
    )
    assert "error" in answer

    request = _one(list(exporter.get_finished_spans()), "session/prompt")
    assert request.status.status_code is StatusCode.ERROR
    assert request.attributes is not None
    assert request.attributes["rpc.jsonrpc.error_code"] == answer["error"]["code"]
    assert f"{request.context.trace_id:032x}" == TRACE_ID
