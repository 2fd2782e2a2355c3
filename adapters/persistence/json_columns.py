"""How JSON columns are written and read, the same on every database."""

import json
import re
from typing import Any

from domain.text import valid_data

# JSON columns are written with json.dumps' \u escapes, lone surrogates included.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def load_json(text: str) -> Any:
    """Every JSON column as read. Rows written before text was repaired on entry may hold
    lone surrogates: they are repaired here, so every stored session stays loadable and
    sendable (only rows whose text holds such an escape are walked)."""
    if text == "null":  # most messages' meta: no parse for it
        return None
    value = json.loads(text)
    return valid_data(value) if _ESCAPED_SURROGATE.search(text) else value


def dump_repaired_json(value: Any) -> str:
    """A JSON column's text with lone surrogates repaired before it is written, for
    PostgreSQL, which refuses them (SQLite stores them and `load_json` repairs them as read:
    either way what is read back is the same)."""
    text = json.dumps(value)
    return json.dumps(valid_data(value)) if _ESCAPED_SURROGATE.search(text) else text
