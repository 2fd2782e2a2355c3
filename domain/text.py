"""Text that can be stored, sent and encoded: no lone UTF-16 surrogates.

JSON allows `"\\ud800"`, and Python keeps undecodable file-name bytes as surrogates
(`caf\\udce9.txt`), but such a string cannot be encoded as UTF-8: one of them in a history
makes every later store, send or model request fail. Text is repaired where it enters.
"""

import re
from collections.abc import Mapping
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
    return cast(T, _repair(value))


def _repair(value: object) -> object:
    """The repaired value; the very same object when nothing in it needed repair."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, Mapping):
        items = [(_repair(k), _repair(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        repaired = [_repair(v) for v in value]
        if all(r is v for r, v in zip(repaired, value, strict=True)):
            return value
        return type(value)(repaired)
    return value
