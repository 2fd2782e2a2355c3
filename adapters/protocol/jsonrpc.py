"""JSON-RPC 2.0 messages: classifying what arrived, and building what we send."""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

from domain.text import valid_data

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
REQUEST_CANCELLED = -32800  # the answer to a request its sender cancelled ($/cancel_request)

RequestId = int | str | None

# Keys as json.dumps writes them (an int key becomes its digits); NaN/Infinity become null.
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS


class RpcError(Exception):
    """An error to answer a request with. The message is for people; `data` for programs."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: Any = None
    error: dict[str, Any] | None = None


Incoming = Request | Notification | Response


class Malformed(RpcError):
    """A message that cannot be served, with the id to answer it under (None if unknown)."""

    def __init__(
        self, code: int, message: str, data: object, *, id: RequestId = None, answer: bool = True
    ) -> None:
        super().__init__(code, message, data)
        self.id = id
        self.answer = answer


def _valid_id(value: object) -> bool:
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


MAX_DEPTH = 128  # ACP messages nest about 8 deep; the rest is headroom for `_meta`
# Lone surrogates can only arrive as \\u escapes or as their (invalid) UTF-8 bytes.
_MAY_HOLD_SURROGATES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def decode_json(raw: bytes | str) -> object:
    """Strict JSON (no NaN or Infinity), at most MAX_DEPTH deep, every string valid text."""
    data = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
    try:
        message = json.loads(data, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Malformed(
            PARSE_ERROR, "Parse error: the message is not valid JSON.", {"details": str(exc)}
        ) from None
    except RecursionError:
        raise _nested_too_deeply() from None
    if _too_deep(message):
        raise _nested_too_deeply()
    return valid_data(message) if _MAY_HOLD_SURROGATES.search(data) else message


def _nested_too_deeply() -> Malformed:
    return Malformed(
        PARSE_ERROR,
        f"Parse error: the message is nested more than {MAX_DEPTH} levels deep.",
        {"maxDepth": MAX_DEPTH},
    )


def _too_deep(value: object) -> bool:
    """Iterative, so that the check itself cannot overflow the stack."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > MAX_DEPTH:
                return True
            pending.extend((child, depth + 1) for child in item)
    return False


def _shown(value: object) -> object:
    """A received value fit to echo in an error: short strings as they are, else the type."""
    return value if isinstance(value, str) and len(value) <= 40 else type(value).__name__


def parse(raw: bytes | str) -> Incoming:
    """Classify one framed message; raises Malformed with the error to send back."""
    message = decode_json(raw)
    if not isinstance(message, dict):
        kind = "a batch (array)" if isinstance(message, list) else type(message).__name__
        raise Malformed(
            INVALID_REQUEST,
            "Invalid request: expected a JSON-RPC object.",
            {
                "received": kind,
                "reason": "ACP peers send one object per message; batches are not supported",
            },
        )
    has_id = "id" in message
    msg_id = message.get("id")
    if has_id and not _valid_id(msg_id):
        raise Malformed(
            INVALID_REQUEST,
            "Invalid request: id must be a string, a number or null.",
            {"field": "id"},
        )
    version = message.get("jsonrpc", "2.0")  # tolerated when missing, like the reference SDK
    if version != "2.0":
        raise Malformed(
            INVALID_REQUEST,
            'Invalid request: "jsonrpc" must be "2.0".',
            {"field": "jsonrpc", "received": _shown(version)},
            id=msg_id,
            answer=has_id,
        )
    if "method" in message:
        return _parse_call(message, has_id, msg_id)
    if has_id and ("result" in message or "error" in message):
        if "result" in message and "error" in message:
            raise Malformed(
                INVALID_REQUEST,
                "Invalid response: both result and error.",
                {"id": msg_id},
                answer=False,
            )
        error = message.get("error")
        return Response(
            id=msg_id,
            result=message.get("result"),
            error=error if isinstance(error, dict) else None,
        )
    raise Malformed(
        INVALID_REQUEST,
        "Invalid request: a message needs a method, or an id with a result or error.",
        {"fields": sorted(message)[:20]},
        id=msg_id,
    )


def _parse_call(message: dict[str, Any], has_id: bool, msg_id: RequestId) -> Incoming:
    method = message["method"]
    if not isinstance(method, str) or not method:
        raise Malformed(
            INVALID_REQUEST,
            "Invalid request: method must be a non-empty string.",
            {"field": "method"},
            id=msg_id,
            answer=has_id,
        )
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        raise Malformed(
            INVALID_PARAMS,
            "Invalid params: ACP uses named params (an object).",
            {"field": "params", "method": method},
            id=msg_id,
            answer=has_id,
        )
    if has_id:
        return Request(id=msg_id, method=method, params=params)
    return Notification(method=method, params=params)


def encode(message: dict[str, Any]) -> bytes:
    """One compact line of strict JSON (no NaN or Infinity: those become null).

    orjson writes it (one per streamed delta: the standard library costs several times
    more); what it refuses (a lone surrogate, an integer past 64 bits) takes the slow path."""
    try:
        return orjson.dumps(message, option=_ORJSON_OPTIONS) + b"\n"
    except orjson.JSONEncodeError:
        return _encode_slowly(message)


def _encode_slowly(message: dict[str, Any]) -> bytes:
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(message), ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode()
    except UnicodeEncodeError:  # text we did not repair on its way in: repaired on its way out
        return _encode_slowly(valid_data(message))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def result_message(id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_message(id: RequestId, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": error.to_json()}
