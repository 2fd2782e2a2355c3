"""How text is stored on PostgreSQL, importable without SQLAlchemy (the start path's early
reads decode with it too; adapters/persistence/postgres.py registers it on every connection).

PostgreSQL text cannot hold NUL, which SQLite stores. A string holding one (or starting
with the marker itself) is stored as the marker and its JSON escape; every other string is
stored as is. Lossless, and the same on the way in and out, so equality queries still match.
"""

import json

_MARK = "\uffff"  # a Unicode noncharacter: never meant to appear in interchanged text


def encode_text(value: str) -> str:
    if "\x00" not in value and not value.startswith(_MARK):
        return value
    return _MARK + json.dumps(value, ensure_ascii=False)


def decode_text(stored: str) -> str:
    return json.loads(stored[1:]) if stored.startswith(_MARK) else stored
