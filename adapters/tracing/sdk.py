"""The OpenTelemetry SDK, set up from the standard OTEL_* variables when tracing is on:
a tracer provider (service name, resource and sampler from the SDK's own variables) with
one batching processor per exporter. Needs the `otel` extra (`pip install iac-code[otel]`)."""

import sys
from collections.abc import Mapping, Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

GRPC = "grpc"


class ExporterUnavailable(RuntimeError):
    pass


def _otlp(env: Mapping[str, str]) -> SpanExporter:
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    try:
        if protocol == GRPC:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )

            exporter: SpanExporter = GrpcExporter()
            return exporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()  # endpoint, headers, timeout: from OTEL_EXPORTER_OTLP_*
    except ImportError as exc:
        package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if protocol == GRPC else "http")
        raise ExporterUnavailable(
            f"OTEL_TRACES_EXPORTER=otlp ({protocol}) needs the package {package} "
            "(pip install 'iac-code[otel]' installs the http/protobuf one)"
        ) from exc


def _exporter(name: str, env: Mapping[str, str]) -> SpanExporter:
    if name == "console":
        # Never stdout: over stdio that is the protocol's, one JSON-RPC message per line.
        return ConsoleSpanExporter(out=sys.stderr)
    return _otlp(env)


def _resource(env: Mapping[str, str], version: str) -> Resource:
    """Our service name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name another
    (the SDK reads both; what is given here would override them)."""
    attributes = {"service.version": version}
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = "iac-code"
    return Resource.create(attributes)


def start_sdk(exporters: Sequence[str], env: Mapping[str, str], version: str) -> TracerProvider:
    """Install the process's tracer provider. Spans still buffered at exit are flushed by
    the provider's own exit hook."""
    provider = TracerProvider(resource=_resource(env, version))  # sampler: OTEL_TRACES_SAMPLER
    for name in exporters:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, env)))
    trace.set_tracer_provider(provider)
    return provider
