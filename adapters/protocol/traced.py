"""Continues the client's W3C trace context: a request carrying `traceparent` (and
`tracestate`) in `params._meta` is served inside a span that is the child of the client's,
so everything the request does (a prompt's turn, its model requests, tool calls and
storage) lands in the client's trace. Without them the request's span is a new root.

The span comes from the tracing port (`Tracer.serve`): the protocol core names the call
and reads the carrier; the tracing adapter owns OpenTelemetry."""

from collections.abc import Awaitable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from adapters.protocol.question_wire import QuestionWire
from application.ports.tracing import Span, Tracer

_FIELDS = ("traceparent", "tracestate")


def trace_carrier(params: Mapping[str, Any] | None) -> dict[str, str]:
    """The W3C fields a request carries in `params._meta` (strings only)."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, Mapping):
        return {}
    return {k: v for k in _FIELDS if isinstance(v := meta.get(k), str)}


def _attributes(method: str, params: Mapping[str, Any] | None) -> dict[str, str]:
    attributes = {"rpc.system": "jsonrpc", "rpc.method": method}
    session_id = params.get("sessionId") if isinstance(params, Mapping) else None
    if isinstance(session_id, str):
        attributes["session.id"] = session_id
    return attributes


class TracedDispatcher(Dispatcher):
    """Wraps the protocol's dispatcher: one server span per inbound request or notification.
    Installed by the composition root only when tracing is on; off, it is not there at all."""

    def __init__(self, inner: Dispatcher, tracer: Tracer) -> None:
        self._inner = inner
        self._tracer = tracer

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        return self._traced(method, params, self._inner.accept(method, params, peer))

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: Connection) -> bool:
        return self._inner.withdraw(method, params, peer)

    def question_wire(self) -> QuestionWire | None:
        return self._inner.question_wire()

    def cancelled_by(self, method: str) -> str | None:
        return self._inner.cancelled_by(method)

    def finishing(self, peer: Connection) -> None:
        self._inner.finishing(peer)

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
                span.set("rpc.jsonrpc.error_code", error.code)
                raise

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        with self._span(method, params):
            await self._inner.handle_notification(method, params, peer)

    async def peer_closed(self, peer: Connection) -> None:
        await self._inner.peer_closed(peer)

    def _span(self, method: str, params: dict[str, Any] | None) -> AbstractContextManager[Span]:
        return self._tracer.serve(method, trace_carrier(params), _attributes(method, params))
