"""Text that can be stored, sent and encoded: no lone UTF-16 surrogates.

JSON allows `"\\ud800"`, and Python keeps undecodable file-name bytes as surrogates
(`caf\\udce9.txt`), but such a string cannot be encoded as UTF-8: one of them in a history
makes every later store, send or model request fail. Text is repaired where it enters.
"""

import re
from collections.abc import Callable, Mapping
from typing import TypeVar, cast

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")

T = TypeVar("T")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD; the same object when already valid.

    A well-formed high+low pair (as json.loads never produces, but a caller might) is joined
    into the character it encodes first, so nothing representable is lost."""
    if not _SURROGATE.search(text):
        return text
    joined = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _SURROGATE.sub(REPLACEMENT, joined)


def valid_data(value: T) -> T:
    """A JSON-like value (dicts, lists, strings, numbers) with every string repaired."""
    return map_strings(value, valid_text)


def map_strings(value: T, change: Callable[[str], str]) -> T:
    """`value` with `change` applied to every string in it, keys included; the very same
    object wherever nothing changed (so checking valid data costs no copies)."""
    return cast(T, _map(value, change))


def _map(value: object, change: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        items = [(_map(k, change), _map(v, change)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        mapped = [_map(v, change) for v in value]
        if all(m is v for m, v in zip(mapped, value, strict=True)):
            return value
        return type(value)(mapped)
    return value
