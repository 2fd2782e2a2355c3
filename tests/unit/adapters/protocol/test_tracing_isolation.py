"""Trace context stays with the request that carried it: over one connection, a request
without `traceparent` served while a traced one is still running starts its own trace."""

import asyncio
import json
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.traced import TracedDispatcher
from adapters.tracing.otel import OtelTracer
from tests.unit.adapters.protocol.test_tracing import TRACE_ID, TRACEPARENT


class Held(Dispatcher):
    """`slow` waits for the gate; every call notes the trace it is served in."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.traces: dict[str, int] = {}

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.traces[method] = trace.get_current_span().get_span_context().trace_id
        if method == "slow":
            self.entered.set()
            await self.gate.wait()
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        self.traces[method] = trace.get_current_span().get_span_context().trace_id

    async def peer_closed(self, peer: Connection) -> None:
        pass


async def until(condition: Callable[[], bool]) -> None:
    """Let the connection's tasks run until `condition` holds (the caller bounds it)."""
    while not condition():
        await asyncio.sleep(0)


async def test_an_untraced_request_beside_a_traced_one_is_a_new_root() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inner = Held()
    answers: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        answers.append(message)

    connection = Connection(send, TracedDispatcher(inner, OtelTracer(provider)))
    traced = {"_meta": {"traceparent": TRACEPARENT}}
    await connection.receive(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": traced})
    )
    await asyncio.wait_for(inner.entered.wait(), 5)
    await connection.receive(
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "quick", "params": {}})
    )
    await connection.receive(json.dumps({"jsonrpc": "2.0", "method": "note", "params": {}}))
    await asyncio.wait_for(until(lambda: len(answers) == 1 and "note" in inner.traces), 5)
    inner.gate.set()
    await asyncio.wait_for(until(lambda: len(answers) == 2), 5)
    assert f"{inner.traces['slow']:032x}" == TRACE_ID
    assert f"{inner.traces['quick']:032x}" != TRACE_ID
    assert f"{inner.traces['note']:032x}" != TRACE_ID
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert spans["quick"].parent is None and spans["note"].parent is None
    assert trace.get_current_span() is trace.INVALID_SPAN  # nothing left current here
    await connection.close()
