"""What a POST must be: JSON, within the size limit, one JSON-RPC object."""

import asyncio
import json
from typing import Any

from starlette.requests import Request

from adapters.http.errors import HttpError
from adapters.protocol.jsonrpc import (
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    RpcError,
    error_message,
)
from domain.text import valid_text


def check_content_type(header: str | None) -> None:
    media = (header or "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        raise HttpError(415, "Content-Type must be application/json")


async def read_body(request: Request, limit: int, seconds: float) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` (declared or actually sent),
    and with 408 if it has not all arrived within `seconds` (a slow client would
    otherwise hold the request open forever)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except TimeoutError:
        raise HttpError(
            408,
            f"the body did not arrive within {seconds:g} s",
            headers={"Connection": "close"},  # the rest of it must not be read as a request
        ) from None
    return b"".join(chunks)


def decode(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _rpc_400(
            RpcError(PARSE_ERROR, "Parse error: the body is not valid JSON.", {"details": str(exc)})
        ) from None
    except RecursionError:  # deeper than the parser's own stack allows
        raise _rpc_400(_too_deep()) from None
    if _deeper_than(message, MAX_DEPTH):  # the protocol core's limit, answered here too
        raise _rpc_400(_too_deep())
    if isinstance(message, list):
        raise _rpc_400(
            RpcError(
                INVALID_REQUEST,
                "Invalid request: batches (JSON arrays) are not supported; "
                "POST one JSON-RPC object per request.",
                {"received": "a batch (array)"},
            )
        )
    if not isinstance(message, dict):
        raise _rpc_400(
            RpcError(
                INVALID_REQUEST,
                "Invalid request: expected a JSON-RPC object.",
                {"received": type(message).__name__},
            )
        )
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str | None):
        raise _rpc_400(
            RpcError(
                INVALID_REQUEST,
                "Invalid request: id must be a string, a number or null.",
                {"field": "id"},
            )
        )
    # Lone surrogates become U+FFFD as in the core: the id we match the reply by must be the
    # id the core answers under (the rest of the body is the core's to repair).
    for key in ("id", "method"):
        if isinstance(message.get(key), str):
            message[key] = valid_text(message[key])
    return message


def is_initialize(message: dict[str, Any]) -> bool:
    return message.get("method") == "initialize" and "id" in message


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _too_deep() -> RpcError:
    return RpcError(
        PARSE_ERROR,
        f"Parse error: the body is nested more than {MAX_DEPTH} levels deep.",
        {"maxDepth": MAX_DEPTH},
    )


def _deeper_than(value: object, limit: int) -> bool:
    """Iterative, so that the check cannot overflow the stack itself."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            pending.extend((child, depth + 1) for child in item)
    return False


def _rpc_400(error: RpcError) -> HttpError:
    return HttpError(400, error.message, body=error_message(None, error))


def _too_large(limit: int) -> HttpError:
    return HttpError(413, f"the body is larger than the limit of {limit} bytes")
