"""What a POST must be: JSON, within the size limit, one JSON-RPC object."""

import asyncio
from typing import Any

from starlette.requests import ClientDisconnect, Request

from adapters.http.errors import ClientGone, HttpError
from adapters.protocol.jsonrpc import (
    INVALID_REQUEST,
    Malformed,
    RpcError,
    decode_json,
    error_message,
)


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
    except ClientDisconnect:  # it reset or closed its connection with the body unsent
        raise ClientGone from None
    except TimeoutError:
        raise HttpError(
            408,
            f"the body did not arrive within {seconds:g} s",
            headers={"Connection": "close"},  # the rest of it must not be read as a request
        ) from None
    return b"".join(chunks)


def decode(body: bytes) -> dict[str, Any]:
    try:  # the protocol core's reading: strict, bounded in depth, text repaired
        message = decode_json(body)
    except Malformed as exc:
        raise _rpc_400(exc) from None
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
    return message


def is_initialize(message: dict[str, Any]) -> bool:
    return message.get("method") == "initialize" and "id" in message


def _rpc_400(error: RpcError) -> HttpError:
    return HttpError(400, error.message, body=error_message(None, error))


def _too_large(limit: int) -> HttpError:
    return HttpError(413, f"the body is larger than the limit of {limit} bytes")
