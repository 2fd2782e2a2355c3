"""What tracing costs, in process: per inbound message through the protocol core
(`Connection.receive` → dispatcher → answer) and per span of the tracing port.

Run alone:  .venv/bin/python bench/tracing.py [--messages 20000] [--runs 5]

Off is what the server runs with no OTEL_* variables: no dispatcher wrapper and the no-op
tracer (the composition root installs nothing). On is the TracedDispatcher and OtelTracer
over the SDK with a batching processor and an exporter that drops what it gets (so export
I/O is left out; a real exporter works on the processor's thread). The request is one
the agent answers at once, so the figures are the protocol core's own cost plus tracing's.
"""

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from adapters.tracing.dispatcher import TracedDispatcher
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from adapters.protocol.connection import Connection, Dispatcher
from adapters.tracing.otel import OtelTracer
from application.ports.tracing import NO_TRACING, Tracer

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Dropping(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class Answering(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


def _lines(count: int, meta: bool) -> list[bytes]:
    params: dict[str, Any] = {"sessionId": "sess_1", "modeId": "default"}
    if meta:
        params["_meta"] = {"traceparent": TRACEPARENT, "tracestate": "vendor=1"}
    return [
        json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "session/set_mode", "params": params}
        ).encode()
        for i in range(count)
    ]


async def _per_message(dispatcher: Dispatcher, lines: list[bytes]) -> float:
    """Microseconds per message, from the first line received to the last answer sent."""
    answered = 0
    done = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        nonlocal answered
        answered += 1
        if answered == len(lines):
            done.set()

    connection = Connection(send, dispatcher)
    started = time.perf_counter()
    for line in lines:
        await connection.receive(line)
    await done.wait()
    return (time.perf_counter() - started) / len(lines) * 1e6


def _per_span(tracer: Tracer, count: int) -> float:
    attributes = {"session.id": "sess_1"}
    started = time.perf_counter()
    for _ in range(count):
        with tracer.span("turn", attributes) as span:
            span.set("acp.stop_reason", "end_turn")
    return (time.perf_counter() - started) / count * 1e6


def _median(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()))
    plain, traced = Answering(), TracedDispatcher(Answering(), provider)
    bare, with_meta = _lines(args.messages, False), _lines(args.messages, True)

    def message(dispatcher: Dispatcher, lines: list[bytes]) -> Callable[[], float]:
        return lambda: asyncio.run(_per_message(dispatcher, lines))

    rows = [
        ("message, tracing off (no wrapper)", message(plain, bare)),
        ("message with _meta.traceparent, tracing off", message(plain, with_meta)),
        ("message, tracing on, no traceparent (new root)", message(traced, bare)),
        ("message with _meta.traceparent, tracing on", message(traced, with_meta)),
        ("span of the port, off (NO_TRACING)", lambda: _per_span(NO_TRACING, args.messages)),
        (
            "span of the port, on (OtelTracer, SDK)",
            lambda: _per_span(OtelTracer(provider), args.messages),
        ),
    ]
    print(f"{args.messages} messages or spans a run, median of {args.runs} runs")
    for what, measure in rows:
        print(f"{what:<52} {_median(args.runs, measure):8.2f} µs")
    provider.shutdown()


if __name__ == "__main__":
    main()
