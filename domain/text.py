"""Text that can be stored, sent and encoded: no lone UTF-16 surrogates.

JSON allows `"\\ud800"`, and Python keeps undecodable file-name bytes as surrogates
(`caf\\udce9.txt`), but such a string cannot be encoded as UTF-8: one of them in a history
makes every later store, send or model request fail. Text is repaired where it enters.
"""

import os
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


def shown(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A file name as text the model can use. Bytes that are not UTF-8 (kept by Python as
    lone surrogates, which no JSON encoder accepts) are written as `\\xNN` escapes, e.g.
    `caf\\xe9.txt`: exact and readable, and what bash's `$'caf\\xe9.txt'` names."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no file name bytes map to
        return valid_text(os.fsdecode(path))


def clip(text: str, limit: int, hint: str = "") -> str:
    """Keep the head and the tail of long output, with a marker saying what was cut."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n\n[... {cut} characters truncated{hint} ...]\n\n{tail}"


def is_binary(sample: bytes) -> bool:
    """A file's first bytes holding a NUL: not text, never shown or changed as text."""
    return b"\0" in sample
