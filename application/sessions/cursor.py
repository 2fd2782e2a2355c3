"""Opaque page cursors for session/list, bound to the filter they were made for."""

import base64
import binascii
import hashlib
import json
from datetime import datetime

from application.errors import InvalidCursor


def _scope(cwd: str | None) -> str:
    return hashlib.sha256((cwd or "\0all").encode()).hexdigest()[:16]


def encode_cursor(cwd: str | None, updated_at: datetime, session_id: str) -> str:
    payload = {"s": _scope(cwd), "u": updated_at.isoformat(), "i": session_id}
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


def decode_cursor(cwd: str | None, cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw)
        key = (datetime.fromisoformat(payload["u"]), str(payload["i"]))
        scope = payload["s"]
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise InvalidCursor("The cursor is not one this server gave out.", cursor=cursor) from None
    if key[0].tzinfo is None:  # not one of ours (they say UTC): the store refuses it
        raise InvalidCursor("The cursor is not one this server gave out.", cursor=cursor)
    if scope != _scope(cwd):
        raise InvalidCursor(
            "The cursor belongs to a listing with another cwd filter.", cursor=cursor
        )
    return key
