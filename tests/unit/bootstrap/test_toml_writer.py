import math
import tomllib
from datetime import UTC, date, datetime, time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bootstrap.toml_writer import dumps

scalars = (
    st.text()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
documents = st.dictionaries(st.text(), values, max_size=5)


@given(documents)
def test_what_it_writes_reads_back_the_same(data: dict[str, Any]) -> None:
    assert tomllib.loads(dumps(data)) == data


def test_strings_are_escaped() -> None:
    text = 'a "quoted" \\ back\tslash\nnew line \x00 \x1f \x7f é 😀'
    written = dumps({"s": text})
    assert tomllib.loads(written) == {"s": text}
    assert "\n" not in written.rstrip("\n")  # one line: the newline is escaped


def test_keys_that_are_not_bare_are_quoted() -> None:
    data = {"providers": {"my vllm": {"base_url": "u"}, "a.b": {"x": 1}, "": {"y": 2}}}
    written = dumps(data)
    assert '[providers."my vllm"]' in written
    assert '[providers."a.b"]' in written
    assert tomllib.loads(written) == data


def test_tables_arrays_of_tables_and_empty_tables() -> None:
    data = {
        "model": "m",
        "providers": {
            "local": {"models": ["a", {"id": "b", "context_window": 32768, "input_price": 0.2}]}
        },
        "empty": {},
        "catalogue": {"m": {"prices": {"input": 1.0}}},
    }
    written = dumps(data)
    assert written.startswith('model = "m"\n')
    assert "[empty]" in written
    assert tomllib.loads(written) == data


def test_dates_times_and_special_floats() -> None:
    data = {
        "at": datetime(2026, 3, 1, 10, 0, 5, 120000, tzinfo=UTC),
        "local": datetime(2026, 3, 1, 10, 0),
        "day": date(2026, 3, 1),
        "time": time(7, 30),
        "big": float("inf"),
        "small": float("-inf"),
        "tiny": 1e-300,
    }
    assert tomllib.loads(dumps(data)) == data
    assert math.isnan(tomllib.loads(dumps({"n": float("nan")}))["n"])


def test_what_toml_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError, match="set"):
        dumps({"s": {1, 2}})
