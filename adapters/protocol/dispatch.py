"""The method table: each method's params model, its handler and what it advertises, and
the one place where a request's params are read through that model.

A face declares its routes; `MethodTable.serve` finds the route (its aliases resolved),
validates the params with the route's pydantic model and hands the handler the typed
request with the `Call` (the method, the params as sent, the peer). A validation failure
is answered -32602 here, naming each field; a model that words its own refusal (a
`refused` classmethod: the messages clients already know) is asked for it instead."""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from adapters.protocol.connection import Connection
from adapters.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError

Params = dict[str, Any] | None
M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Call:
    """A request beside its typed params: the method routed (an alias resolved), the params
    as they were sent (what is routed to another replica, what a model does not keep),
    and the connection that sent it."""

    method: str
    params: Params
    peer: Connection


@dataclass(frozen=True, slots=True)
class Route(Generic[R]):
    """One method: the model its params are read with (None: the handler reads them as
    sent; only `initialize`, answered before pydantic loads), its handler, the entries it
    stands for in the advertised capabilities, and what is done to the params before
    they are read (e.g. a default the schema does not have)."""

    params: type[BaseModel] | None
    handler: Callable[[R, Call], Awaitable[Any]]
    capabilities: tuple[Any, ...] = ()
    prepare: Callable[[Params], Params] | None = None


def route(
    model: type[M],
    handler: Callable[[M, Call], Awaitable[Any]],
    *,
    prepare: Callable[[Params], Params] | None = None,
) -> Route[M]:
    """A route whose handler takes what `model` reads (checked by the type checker)."""
    return Route(model, handler, (), prepare)


def by_hand(handler: Callable[[Params, Call], Awaitable[Any]]) -> Route[Params]:
    """A route whose handler reads the params as they were sent."""
    return Route(None, handler)


class MethodTable:
    def __init__(self, routes: Mapping[str, Route[Any]], aliases: Mapping[str, str]) -> None:
        self.routes = dict(routes)
        self._aliases = aliases

    def canonical(self, method: str) -> str:
        return self._aliases.get(method, method)

    def find(self, method: str) -> Route[Any]:
        found = self.routes.get(self.canonical(method))
        if found is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        return found

    def parse(self, method: str, params: Params) -> Any:
        """`params` of `method` (an alias resolved) read with its route's model."""
        canonical = self.canonical(method)
        found = self.find(method)
        if found.prepare is not None:
            params = found.prepare(params)
        if found.params is None:
            return params
        return parse_params(found.params, params, canonical)

    async def serve(self, method: str, params: Params, peer: Connection) -> Any:
        return await self.call(self.find(method), method, params, peer)

    async def call(self, found: Route[Any], method: str, params: Params, peer: Connection) -> Any:
        """`found` (the route of `method`) served: its params read, then its handler."""
        request = self.parse(method, params)
        return await found.handler(request, Call(self.canonical(method), params, peer))


def parse_params(model: type[M], params: Params, method: str) -> M:
    """`params` read with `model`; anything it refuses is answered -32602."""
    given = params or {}
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        details = exc.errors(include_url=False, include_input=False)
        refused: Callable[..., RpcError] | None = getattr(model, "refused", None)
        if refused is not None:
            raise refused(method, given, details) from None
        raise invalid_params(method, details) from None


def invalid_params(method: str, details: Sequence[ErrorDetails]) -> RpcError:
    """-32602 naming each field the model refused and why (the first three in the
    message, all of them in `data.errors`)."""
    errors = [
        {"field": ".".join(str(p) for p in e["loc"]) or "params", "message": e["msg"]}
        for e in details
    ]
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:3])
    return RpcError(
        INVALID_PARAMS,
        f"Invalid params for {method}: {summary}",
        {"method": method, "errors": errors},
    )
