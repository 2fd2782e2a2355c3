"""Continues the client's W3C trace context: a request carrying `traceparent` (and
`tracestate`) in `params._meta` is served inside a span that is the child of the client's,
so everything the request does (a prompt's turn, its model requests, tool calls and
storage) lands in the client's trace. Without them the request's span is a new root."""

from collections.abc import Awaitable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from adapters.tracing.otel import INSTRUMENTATION, record_failure

_FIELDS = ("traceparent", "tracestate")
_PROPAGATOR = TraceContextTextMapPropagator()


def incoming_context(params: Mapping[str, Any] | None) -> Context | None:
    """The caller's context from `params._meta`; None when there is none or it does not
    parse (the W3C rule: a malformed traceparent is ignored, never an error)."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, Mapping):
        return None
    carrier = {k: v for k in _FIELDS if isinstance(v := meta.get(k), str)}
    if "traceparent" not in carrier:
        return None
    context = _PROPAGATOR.extract(carrier)
    return context if trace.get_current_span(context).get_span_context().is_valid else None


def _attributes(method: str, params: Mapping[str, Any] | None) -> dict[str, str]:
    attributes = {"rpc.system": "jsonrpc", "rpc.method": method}
    session_id = params.get("sessionId") if isinstance(params, Mapping) else None
    if isinstance(session_id, str):
        attributes["session.id"] = session_id
    return attributes


class TracedDispatcher(Dispatcher):
    """Wraps the protocol's dispatcher: one server span per inbound request or notification.
    Installed by the composition root only when tracing is on; off, it is not there at all."""

    def __init__(self, inner: Dispatcher, provider: trace.TracerProvider | None = None) -> None:
        self._inner = inner
        self._tracer = trace.get_tracer(INSTRUMENTATION, tracer_provider=provider)

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        return self._traced(method, params, self._inner.accept(method, params, peer))

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        return await self._traced(method, params, self._inner.handle_request(method, params, peer))

    async def _traced(
        self, method: str, params: dict[str, Any] | None, work: Awaitable[Any]
    ) -> Any:
        with self._span(method, params) as span:
            try:
                return await work
            except RpcError as error:
                span.set_attribute("rpc.jsonrpc.error_code", error.code)
                record_failure(span, error)
                raise
            except BaseException as error:
                record_failure(span, error)
                raise

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        with self._span(method, params) as span:
            try:
                await self._inner.handle_notification(method, params, peer)
            except BaseException as error:
                record_failure(span, error)
                raise

    async def peer_closed(self, peer: Connection) -> None:
        await self._inner.peer_closed(peer)

    def _span(self, method: str, params: dict[str, Any] | None) -> Any:
        return self._tracer.start_as_current_span(
            method,
            context=incoming_context(params),
            kind=SpanKind.SERVER,
            attributes=_attributes(method, params),
            record_exception=False,
            set_status_on_exception=False,
        )
