"""A small TOML writer for what `config import` writes and what `tomllib` reads back from an
existing config.toml: tables, strings, numbers, booleans, dates and times, and arrays (tables
inside arrays written inline). The standard library reads TOML but does not write it."""

import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def dumps(data: Mapping[str, Any]) -> str:
    lines: list[str] = []
    _table(data, (), lines)
    return "\n".join(lines).strip("\n") + "\n"


def _table(table: Mapping[str, Any], path: tuple[str, ...], lines: list[str]) -> None:
    plain = [(k, v) for k, v in table.items() if not isinstance(v, Mapping)]
    nested = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    # A header for a table with values of its own, or an empty one (so that it exists);
    # a table holding only tables is implied by theirs.
    if path and (plain or not nested):
        lines += ["", "[" + ".".join(_key(p) for p in path) + "]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in plain]
    for key, value in nested:
        _table(value, (*path, key), lines)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # Control characters (which TOML forbids raw in a basic string) as \uXXXX.
    escaped = (
        _ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
        for c in text
    )
    return '"' + "".join(escaped) + '"'


def _value(value: Any) -> str:
    match value:
        case bool():  # before int: a bool is an int
            return "true" if value else "false"
        case str():
            return _string(value)
        case int():
            return str(value)
        case float():
            if math.isnan(value):
                return "nan"
            if math.isinf(value):
                return "inf" if value > 0 else "-inf"
            return repr(value)
        case datetime() | date() | time():
            return value.isoformat()
        case Mapping():
            return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
        case list() | tuple():
            return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
