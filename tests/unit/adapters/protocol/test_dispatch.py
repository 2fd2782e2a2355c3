"""The method table reads each request's params once, through its route's model, and hands
the handler the typed request; what the model refuses is -32602 naming each field (in the
model's own words where it has them). No protocol version's models here: any face's work."""

from typing import Any

import pytest
from pydantic import BaseModel, Field, StrictStr

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.dispatch import Call, MethodTable, Params, by_hand, route
from adapters.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError


class Greeting(BaseModel):
    session_id: str = Field(alias="sessionId")
    name: StrictStr
    times: int = 1


class Worded(BaseModel):
    title: StrictStr

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        fields = [str(e["loc"][0]) for e in details]
        return RpcError(INVALID_PARAMS, f"{method}: no title", {"got": given, "fields": fields})


class Quiet(Dispatcher):
    async def handle_request(self, method: str, params: Params, peer: Connection) -> Any:
        return None

    async def handle_notification(self, method: str, params: Params, peer: Connection) -> None:
        return None

    async def peer_closed(self, peer: Connection) -> None:
        return None


async def _nowhere(message: dict[str, Any]) -> None:
    return None


PEER = Connection(_nowhere, Quiet())


def table(handled: list[tuple[Any, Call]]) -> MethodTable:
    async def greet(request: Greeting, call: Call) -> Any:
        handled.append((request, call))
        return {"hello": request.name * request.times}

    async def name(request: Worded, call: Call) -> Any:
        handled.append((request, call))
        return request.title

    async def raw(params: Params, call: Call) -> Any:
        handled.append((params, call))
        return params

    def with_times(params: Params) -> Params:
        return {"times": 2, **(params or {})}

    return MethodTable(
        {
            "x/greet": route(Greeting, greet),
            "x/twice": route(Greeting, greet, prepare=with_times),
            "x/name": route(Worded, name),
            "x/raw": by_hand(raw),
        },
        {"greet": "x/greet"},
    )


async def test_the_handler_gets_the_typed_request_and_the_call_as_it_came() -> None:
    handled: list[tuple[Any, Call]] = []
    params = {"sessionId": "s", "name": "ab", "extra": [1]}
    assert await table(handled).serve("greet", params, PEER) == {"hello": "ab"}
    [(request, call)] = handled
    assert isinstance(request, Greeting) and request.session_id == "s"
    assert (call.method, call.params, call.peer) == ("x/greet", params, PEER)  # alias resolved


async def test_what_a_route_prepares_is_read_but_the_call_keeps_the_params_as_sent() -> None:
    handled: list[tuple[Any, Call]] = []
    params = {"sessionId": "s", "name": "ab"}
    assert await table(handled).serve("x/twice", params, PEER) == {"hello": "abab"}
    assert handled[0][1].params == params


async def test_a_route_read_by_hand_gets_the_params_as_sent() -> None:
    handled: list[tuple[Any, Call]] = []
    assert await table(handled).serve("x/raw", None, PEER) is None
    assert handled[0][0] is None


async def test_params_the_model_refuses_are_invalid_params_naming_each_field() -> None:
    handled: list[tuple[Any, Call]] = []
    with pytest.raises(RpcError) as caught:
        await table(handled).serve("greet", {"name": 3, "times": "many"}, PEER)
    assert handled == []
    error = caught.value
    assert error.code == INVALID_PARAMS
    assert error.message == (
        "Invalid params for x/greet: sessionId: Field required; "
        "name: Input should be a valid string; "
        "times: Input should be a valid integer, unable to parse string as an integer"
    )
    assert error.data == {
        "method": "x/greet",
        "errors": [
            {"field": "sessionId", "message": "Field required"},
            {"field": "name", "message": "Input should be a valid string"},
            {
                "field": "times",
                "message": "Input should be a valid integer, unable to parse string as an integer",
            },
        ],
    }


async def test_a_model_that_words_its_refusal_is_asked_for_it() -> None:
    with pytest.raises(RpcError) as caught:
        await table([]).serve("x/name", {"title": 1}, PEER)
    assert caught.value.to_json() == {
        "code": INVALID_PARAMS,
        "message": "x/name: no title",
        "data": {"got": {"title": 1}, "fields": ["title"]},
    }


async def test_an_unknown_method_is_method_not_found_named_as_sent() -> None:
    with pytest.raises(RpcError) as caught:
        await table([]).serve("x/nope", {}, PEER)
    assert caught.value.to_json() == {
        "code": METHOD_NOT_FOUND,
        "message": "Method not found: x/nope",
        "data": {"method": "x/nope"},
    }
