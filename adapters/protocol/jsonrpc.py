"""JSON-RPC 2.0 messages: classifying what arrived, and building what we send."""

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000

RequestId = int | str | None


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


def parse(raw: bytes | str) -> Incoming:
    """Classify one framed message; raises Malformed with the error to send back."""
    try:
        message = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Malformed(
            PARSE_ERROR, "Parse error: the message is not valid JSON.", {"details": str(exc)}
        ) from None
    except RecursionError:
        raise Malformed(
            PARSE_ERROR, "Parse error: the message is nested too deeply.", {"details": "depth"}
        ) from None
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
            {"field": "jsonrpc", "received": version},
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
    """One compact JSON line. Raw UTF-8 when possible, \\u escapes if text has lone surrogates."""
    try:
        return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    except UnicodeEncodeError:
        return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def result_message(id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_message(id: RequestId, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": error.to_json()}
