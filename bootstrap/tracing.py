"""Tracing on or off, from the standard OpenTelemetry variables: on when they configure an
exporter, and only then is OpenTelemetry imported at all. Off, the use cases get the no-op
tracer and the protocol's dispatcher is not wrapped: nothing is done per message."""

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from application.ports.tracing import NO_TRACING, Tracer

if TYPE_CHECKING:  # settings read this module: it stays light
    from adapters.protocol.connection import Dispatcher

EXPORTERS = frozenset({"otlp", "console"})
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class TracingConfigError(ValueError):
    pass


def traces_exporters(env: Mapping[str, str]) -> tuple[str, ...]:
    """The exporters OTEL_TRACES_EXPORTER names ("none" and empty: none). Unset, an OTLP
    endpoint alone means otlp. Unlike the SDK's own default (otlp), nothing set means off:
    a server started without tracing in mind sends no spans anywhere."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return ()
    raw = env.get("OTEL_TRACES_EXPORTER")
    if raw is None:
        return ("otlp",) if any(env.get(name) for name in _ENDPOINTS) else ()
    names = tuple(dict.fromkeys(n.strip().lower() for n in raw.split(",") if n.strip()))
    names = tuple(n for n in names if n != "none")
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        raise TracingConfigError(
            f"OTEL_TRACES_EXPORTER: unsupported exporter {', '.join(unknown)} "
            f"(supported: {', '.join(sorted(EXPORTERS))}, none)"
        )
    return names


def start_tracing(exporters: tuple[str, ...], env: Mapping[str, str], version: str) -> None:
    """Set up the SDK at start, before any request is served. No-op when tracing is off."""
    if not exporters:
        return
    try:
        from adapters.tracing.sdk import ExporterUnavailable, start_sdk
    except ImportError as exc:
        raise TracingConfigError(
            f"OTEL_TRACES_EXPORTER={','.join(exporters)} needs the OpenTelemetry SDK: "
            "pip install 'iac-code[otel]'"
        ) from exc
    try:
        start_sdk(exporters, env, version)
    except ExporterUnavailable as exc:
        raise TracingConfigError(str(exc)) from exc


async def flush_traces(exporters: tuple[str, ...]) -> None:
    """Export the spans still buffered (the batch processor's queue), before a shutdown
    that may not run the SDK's exit hook. No-op when tracing is off."""
    if not exporters:
        return
    from opentelemetry import trace

    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if flush is not None:
        await asyncio.to_thread(flush)


def make_tracer(exporters: tuple[str, ...]) -> Tracer:
    if not exporters:
        return NO_TRACING
    from adapters.tracing.otel import OtelTracer

    return OtelTracer()


def traced(dispatcher: "Dispatcher", exporters: tuple[str, ...]) -> "Dispatcher":
    """The dispatcher continuing each request's trace context; itself when tracing is off."""
    if not exporters:
        return dispatcher
    from adapters.protocol.traced import TracedDispatcher
    from adapters.tracing.otel import OtelTracer

    return TracedDispatcher(dispatcher, OtelTracer())
