"""The JSON-RPC decoder and encoder under generated input: only Malformed, strict JSON out."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.protocol.jsonrpc import (
    MAX_DEPTH,
    Malformed,
    Notification,
    Request,
    Response,
    _encode_slowly,
    encode,
    parse,
)

pytestmark = pytest.mark.fuzz

any_text = st.text(st.characters(exclude_categories=()), max_size=30)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: the encoder must cope
    | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=15,
)


def _strict(name: str) -> None:
    raise AssertionError(f"{name} in output")


@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_bytes_parse_to_a_message_or_a_malformed_error(raw: bytes) -> None:
    outcome: object
    try:
        outcome = parse(raw)
    except Malformed as exc:
        outcome = exc
    if isinstance(outcome, Malformed):
        assert outcome.code in (-32700, -32600, -32602)
        encode({"jsonrpc": "2.0", "id": outcome.id, "error": outcome.to_json()})  # sendable
    else:
        assert isinstance(outcome, Request | Notification | Response)


@given(json_values)
def test_every_outgoing_message_is_strict_utf8_json(value: object) -> None:
    line = encode({"jsonrpc": "2.0", "method": "x", "params": {"v": value}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    json.loads(line.decode("utf-8"), parse_constant=_strict)


@given(st.integers(MAX_DEPTH + 1, 20_000))
def test_nesting_past_the_limit_is_a_parse_error(depth: int) -> None:
    with pytest.raises(Malformed) as caught:
        parse(b'{"a":' * depth + b"1" + b"}" * depth)
    assert caught.value.code == -32700


def test_finding_9_nan_and_infinity_are_not_json() -> None:
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(Malformed) as caught:
            parse(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":' + constant + b"}}")
        assert caught.value.code == -32700
    assert encode({"x": float("nan"), "y": [float("inf")]}) == b'{"x":null,"y":[null]}\n'


def test_finding_1_lone_surrogates_are_repaired_as_they_arrive() -> None:
    for raw in (
        b'{"jsonrpc":"2.0","method":"m","params":{"t":"a\\ud800"}}',
        '{"method":"m","params":{"t":"a\ud800"}}',
    ):
        message = parse(raw)
        assert isinstance(message, Notification) and message.params == {"t": "a\ufffd"}


keys = any_text | st.integers() | st.booleans() | st.none()  # a Python dict's keys, as sent
loose_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=15,
)


@given(loose_values)
def test_the_fast_encoder_writes_what_the_standard_library_wrote(value: object) -> None:
    message = {"jsonrpc": "2.0", "method": "x", "params": {"v": value}}

    fast, slow = encode(message), _encode_slowly(message)

    assert json.loads(fast) == json.loads(slow)
