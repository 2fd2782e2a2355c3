"""Tracing as the use cases see it: named spans with attributes, nested by the call
structure. The no-op default costs one call returning a shared object, so code that is
traced pays (almost) nothing when tracing is off."""

from abc import abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

AttributeValue = str | bool | int | float | tuple[str, ...]
Attributes = Mapping[str, AttributeValue]


class Span(Protocol):
    @abstractmethod
    def set(self, key: str, value: AttributeValue) -> None:
        """Add an attribute known only once the work has run (a stop reason, a count)."""


class Tracer(Protocol):
    @abstractmethod
    def span(self, name: str, attributes: Attributes | None = None) -> AbstractContextManager[Span]:
        """A span around a `with` block, child of the span current in this task. An
        exception leaving the block is recorded on the span, then propagates."""

    @abstractmethod
    def serve(
        self, name: str, carrier: Mapping[str, str], attributes: Attributes | None = None
    ) -> AbstractContextManager[Span]:
        """A server span around an inbound call: the child of the caller's span when
        `carrier` holds a valid W3C `traceparent` (and `tracestate`), else a new root. A
        malformed `traceparent` is ignored, never an error (the W3C rule)."""


class _NoSpan(Span):
    __slots__ = ()

    def set(self, key: str, value: AttributeValue) -> None:
        pass


NO_SPAN = _NoSpan()
# One reusable context manager: nullcontext holds no state between uses.
_NO_SPAN_CONTEXT = nullcontext(NO_SPAN)


class NoTracing(Tracer):
    """The default: nothing is recorded and nothing is allocated per span."""

    __slots__ = ()

    def span(self, name: str, attributes: Attributes | None = None) -> AbstractContextManager[Span]:
        return _NO_SPAN_CONTEXT

    def serve(
        self, name: str, carrier: Mapping[str, str], attributes: Attributes | None = None
    ) -> AbstractContextManager[Span]:
        return _NO_SPAN_CONTEXT


NO_TRACING = NoTracing()
