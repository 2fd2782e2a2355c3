"""The OpenTelemetry adapter: context extraction from `_meta`, the span a dispatcher
wrapper opens around each call, and how failures and cancellations are recorded."""

import asyncio
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from adapters.protocol.traced import TracedDispatcher, trace_carrier
from adapters.tracing.otel import OtelTracer, incoming_context

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.fixture
def exported() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _parent(params: dict[str, Any] | None) -> trace.SpanContext | None:
    context = incoming_context(trace_carrier(params))
    return None if context is None else trace.get_current_span(context).get_span_context()


def test_traceparent_and_tracestate_are_read_from_meta() -> None:
    parent = _parent({"_meta": {"traceparent": TRACEPARENT, "tracestate": "a=1,b=2"}})
    assert parent is not None and parent.is_remote
    assert f"{parent.trace_id:032x}" == TRACE_ID and f"{parent.span_id:016x}" == PARENT_ID
    assert parent.trace_state.to_header() == "a=1,b=2"


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": None},
        {"_meta": ["traceparent", TRACEPARENT]},
        {"_meta": {"traceparent": 7}},
        {"_meta": {"traceparent": ""}},
        {"_meta": {"traceparent": "00-xyz-abc-01"}},
        {"_meta": {"traceparent": f"00-{TRACE_ID}-{'0' * 16}-01"}},  # zero span id
        {"_meta": {"tracestate": "a=1"}},
    ],
)
def test_no_or_malformed_traceparent_gives_no_parent(params: dict[str, Any] | None) -> None:
    assert _parent(params) is None


class _Inner(Dispatcher):
    """Records the span current while it serves; fails when told to."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error
        self.current: list[trace.SpanContext] = []

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        self.current.append(trace.get_current_span().get_span_context())
        if self.error is not None:
            raise self.error
        return {}

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        self.current.append(trace.get_current_span().get_span_context())

    async def peer_closed(self, peer: Connection) -> None:
        pass


PEER: Any = object()  # the wrapper hands it on untouched


async def test_the_wrapper_serves_inside_a_span_in_the_callers_trace(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    inner = _Inner()
    traced = TracedDispatcher(inner, OtelTracer(provider))
    params = {"sessionId": "s1", "_meta": {"traceparent": TRACEPARENT}}
    assert await traced.handle_request("session/load", params, PEER) == {}
    await traced.handle_notification("session/cancel", params, PEER)

    load, cancel = exporter.get_finished_spans()
    assert (load.name, cancel.name) == ("session/load", "session/cancel")
    assert inner.current == [load.context, cancel.context]  # current while the inner serves
    assert load.parent is not None and f"{load.parent.span_id:016x}" == PARENT_ID
    assert load.attributes == {
        "rpc.system": "jsonrpc",
        "rpc.method": "session/load",
        "session.id": "s1",
    }


async def test_an_rpc_error_is_recorded_with_its_code(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    traced = TracedDispatcher(_Inner(RpcError(-32602, "Unknown session.")), OtelTracer(provider))
    with pytest.raises(RpcError):
        await traced.handle_request("session/prompt", {"sessionId": "x"}, PEER)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None and span.attributes["rpc.jsonrpc.error_code"] == -32602
    assert [e.name for e in span.events] == ["exception"]


async def test_a_cancelled_call_is_not_an_error(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    traced = TracedDispatcher(_Inner(asyncio.CancelledError()), OtelTracer(provider))
    with pytest.raises(asyncio.CancelledError):
        await traced.handle_request("session/prompt", {}, PEER)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes is not None and span.attributes["iac_code.cancelled"] is True
    assert span.events == ()


def test_tracer_spans_nest_and_record_failures(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    tracer = OtelTracer(provider)
    with (
        pytest.raises(ValueError, match="boom"),
        tracer.span("outer", {"session.id": "s1"}) as outer,
    ):
        outer.set("late", 3)
        with tracer.span("inner"):
            raise ValueError("boom")
    inner, outer_span = exporter.get_finished_spans()
    assert inner.parent is not None and inner.parent.span_id == outer_span.context.span_id
    assert outer_span.attributes == {"session.id": "s1", "late": 3}
    for span in (inner, outer_span):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "ValueError: boom"
