"""What a scripted Anthropic server plays: the parts of a streamed message, the replies built
from them (streams, HTTP errors, raw SSE) and the exact event sequence each one sends."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class TextPart:
    """A text block; each piece is one ``text_delta``."""

    pieces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """A thinking block: one ``thinking_delta`` per piece, then one ``signature_delta``."""

    pieces: tuple[str, ...]
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedThinkingPart:
    """A redacted_thinking block: its data comes whole in ``content_block_start``."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolUsePart:
    """A tool_use block; its input is streamed as ``input_json_delta`` pieces."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None  # default: toolu_scripted_<block index>
    chunks: int = 3


@dataclass(frozen=True, slots=True)
class Hang:
    """Marker part: stop streaming here until released, disconnected or stopped."""


HANG: Final = Hang()

Part = TextPart | ThinkingPart | RedactedThinkingPart | ToolUsePart | Hang


def text(*pieces: str) -> TextPart:
    if not pieces:
        raise ValueError("text() needs at least one piece")
    return TextPart(pieces=pieces)


def thinking(*pieces: str, signature: str = "c2NyaXB0ZWQtc2lnbmF0dXJl") -> ThinkingPart:
    if not pieces:
        raise ValueError("thinking() needs at least one piece")
    return ThinkingPart(pieces=pieces, signature=signature)


def redacted_thinking(data: str = "cmVkYWN0ZWQ=") -> RedactedThinkingPart:
    return RedactedThinkingPart(data=data)


def tool_use(
    name: str, input: Mapping[str, Any], *, id: str | None = None, chunks: int = 3
) -> ToolUsePart:
    return ToolUsePart(name=name, input=dict(input), id=id, chunks=max(1, chunks))


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamReply:
    """A 200 ``text/event-stream`` answer built from parts."""

    parts: tuple[Part, ...] = ()
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    model: str | None = None  # default: the model the request named
    message_id: str | None = None  # default: msg_scripted_<request number>
    ping: bool = True  # the real API sends one `ping` right after message_start
    delay: float = 0.0  # seconds slept before every event after the first
    hang_after: int | None = None  # hang once this many events were sent
    release: threading.Event | None = None  # ends a hang when set
    # (error type, message): sent as `event: error` after the parts, instead of
    # message_delta / message_stop.
    error: tuple[str, str] | None = None

    def events(self, request_body: Any = None, *, number: int = 1) -> list[tuple[str, Any]]:
        """The (event type, data) sequence; a Hang marker is ("<hang>", None)."""
        body = request_body if isinstance(request_body, dict) else {}
        usage: dict[str, Any] = {"input_tokens": self.input_tokens}
        if self.cache_creation_input_tokens is not None:
            usage["cache_creation_input_tokens"] = self.cache_creation_input_tokens
        if self.cache_read_input_tokens is not None:
            usage["cache_read_input_tokens"] = self.cache_read_input_tokens
        usage["output_tokens"] = 1
        events: list[tuple[str, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": self.message_id or f"msg_scripted_{number:04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": self.model or body.get("model") or "claude-scripted",
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            )
        ]
        if self.ping:
            events.append(("ping", {"type": "ping"}))
        index = 0
        for part in self.parts:
            if isinstance(part, Hang):
                events.append(("<hang>", None))
                continue
            events.extend(_block_events(index, part))
            index += 1
        if self.error is not None:
            error_type, message = self.error
            events.append(("error", error_body(error_type, message)))
            return _with_hang_at(events, self.hang_after)
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
                    "usage": {"output_tokens": self.output_tokens},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return _with_hang_at(events, self.hang_after)


def stream(
    *parts: Part,
    stop_reason: str | None = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = None,
    cache_creation_input_tokens: int | None = None,
    **options: Any,
) -> StreamReply:
    """A streamed message. ``options`` are the other :class:`StreamReply` fields."""
    return StreamReply(
        parts=parts,
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        **options,
    )


def stream_error(
    *parts: Part,
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    **options: Any,
) -> StreamReply:
    """A 200 stream that sends its parts, then ``event: error`` (how the API fails mid-answer)."""
    return StreamReply(parts=parts, error=(error_type, message), **options)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReply:
    """An HTTP error status with the API's error JSON."""

    status: int
    error_type: str
    message: str
    retry_after_ms: float | None = 1
    should_retry: bool | None = None  # sets x-should-retry, overriding the SDK's policy
    headers: Mapping[str, str] = field(default_factory=dict)


def http_error(
    status: int,
    error_type: str = "api_error",
    message: str = "Internal server error",
    *,
    retry_after_ms: float | None = 1,
    should_retry: bool | None = None,
    headers: Mapping[str, str] | None = None,
) -> ErrorReply:
    return ErrorReply(
        status=status,
        error_type=error_type,
        message=message,
        retry_after_ms=retry_after_ms,
        should_retry=should_retry,
        headers=dict(headers or {}),
    )


def overloaded(message: str = "Overloaded", **kwargs: Any) -> ErrorReply:
    return http_error(529, "overloaded_error", message, **kwargs)


def api_error(message: str = "Internal server error", **kwargs: Any) -> ErrorReply:
    return http_error(500, "api_error", message, **kwargs)


def rate_limited(
    message: str = "Number of requests has exceeded your rate limit", **kwargs: Any
) -> ErrorReply:
    return http_error(429, "rate_limit_error", message, **kwargs)


def auth_failed(message: str = "invalid x-api-key", **kwargs: Any) -> ErrorReply:
    return http_error(401, "authentication_error", message, **kwargs)


@dataclass(frozen=True, slots=True, kw_only=True)
class RawSSE:
    """A 200 event stream of exactly these (event type, JSON-able data) pairs."""

    events: Sequence[tuple[str, Any]]
    delay: float = 0.0


Reply = StreamReply | ErrorReply | RawSSE


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _with_hang_at(events: list[tuple[str, Any]], hang_after: int | None) -> list[tuple[str, Any]]:
    if hang_after is None:
        return events
    real = [e for e in events if e[0] != "<hang>"]
    return [*real[:hang_after], ("<hang>", None), *real[hang_after:]]


def _block_events(index: int, part: Part) -> Iterator[tuple[str, Any]]:
    def start(block: dict[str, Any]) -> tuple[str, Any]:
        return (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )

    def delta(payload: dict[str, Any]) -> tuple[str, Any]:
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": payload},
        )

    match part:
        case TextPart(pieces=pieces):
            yield start({"type": "text", "text": ""})
            for piece in pieces:
                yield delta({"type": "text_delta", "text": piece})
        case ThinkingPart(pieces=pieces, signature=signature):
            yield start({"type": "thinking", "thinking": "", "signature": ""})
            for piece in pieces:
                yield delta({"type": "thinking_delta", "thinking": piece})
            yield delta({"type": "signature_delta", "signature": signature})
        case RedactedThinkingPart(data=data):
            yield start({"type": "redacted_thinking", "data": data})
        case ToolUsePart(name=name, input=input_, id=id_, chunks=chunks):
            tool_id = id_ or f"toolu_scripted_{index:02d}"
            yield start({"type": "tool_use", "id": tool_id, "name": name, "input": {}})
            yield delta({"type": "input_json_delta", "partial_json": ""})
            encoded = json.dumps(dict(input_), separators=(",", ":"))
            size = max(1, -(-len(encoded) // chunks))
            for offset in range(0, len(encoded), size):
                yield delta(
                    {"type": "input_json_delta", "partial_json": encoded[offset : offset + size]}
                )
        case _:
            raise TypeError(f"not a stream part: {part!r}")
    yield ("content_block_stop", {"type": "content_block_stop", "index": index})
