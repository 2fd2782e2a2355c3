"""Server-Sent Events frames, encoded once: a replay re-sends the very same bytes."""

import json
from typing import Any

from adapters.protocol.jsonrpc import encode


def message_frame(event_id: int, message: dict[str, Any], tag: bytes = b"") -> bytes:
    """`tag` follows the number in the id (adapters/http/event_ids.py: session cursors)."""
    # `encode` gives one compact JSON line (no raw newlines) ending in "\n".
    return b"id: %d%s\nevent: message\ndata: %s\n" % (event_id, tag, encode(message))


def retry_frame(retry_ms: int, comment: str) -> bytes:
    return b": %s\nretry: %d\n\n" % (comment.encode(), retry_ms)


def error_frame(code: str, message: str, event_id: int | None = None, **details: Any) -> bytes:
    """An `error` event: not JSON-RPC, so clients reading only `message` events skip it.
    With an id when it stands in the numbered sequence in place of a message."""
    body = json.dumps({"error": {"code": code, "message": message, **details}})
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return b"%sevent: error\ndata: %s\n\n" % (head, body.encode())
