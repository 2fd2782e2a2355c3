"""The tracing port on the OpenTelemetry API: spans go to whichever tracer provider the
process installed (adapters/tracing/sdk.py does, from the OTEL_* variables)."""

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from application.ports.tracing import Attributes, AttributeValue, Span, Tracer

INSTRUMENTATION = "iac-code"
_PROPAGATOR = TraceContextTextMapPropagator()


class _OtelSpan(Span):
    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)


def record_failure(span: trace.Span, error: BaseException) -> None:
    """An exception on the span and an error status. A cancelled task is not a failure:
    it says so in an attribute (a cancelled turn is an answer, `stopReason: cancelled`)."""
    if isinstance(error, asyncio.CancelledError):
        span.set_attribute("iac_code.cancelled", True)
        return
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def incoming_context(carrier: Mapping[str, str]) -> Context | None:
    """The caller's context from its W3C fields; None when there is none or it does not
    parse."""
    if "traceparent" not in carrier:
        return None
    context = _PROPAGATOR.extract(dict(carrier))
    return context if trace.get_current_span(context).get_span_context().is_valid else None


class OtelTracer(Tracer):
    def __init__(self, provider: trace.TracerProvider | None = None) -> None:
        self._tracer = trace.get_tracer(INSTRUMENTATION, tracer_provider=provider)

    def span(self, name: str, attributes: Attributes | None = None) -> AbstractContextManager[Span]:
        return self._span(name, attributes)

    def serve(
        self, name: str, carrier: Mapping[str, str], attributes: Attributes | None = None
    ) -> AbstractContextManager[Span]:
        return self._span(name, attributes, context=incoming_context(carrier), kind=SpanKind.SERVER)

    @contextmanager
    def _span(
        self,
        name: str,
        attributes: Attributes | None,
        *,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Iterator[Span]:
        # Exceptions are recorded here, not by the API's own handling, so that a
        # cancellation is told apart from a failure.
        with self._tracer.start_as_current_span(
            name,
            context=context,
            kind=kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield _OtelSpan(span)
            except BaseException as error:
                record_failure(span, error)
                raise
