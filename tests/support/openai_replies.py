"""What a scripted OpenAI server plays: the parts of a streamed completion, and the replies built
from them (streams, HTTP errors, raw SSE) with the chunks each one sends."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

CREATED: Final = 1_767_225_600  # a fixed `created` time keeps recorded streams comparable


@dataclass(frozen=True, slots=True)
class TextPart:
    """Assistant text; each piece is one ``delta.content``."""

    pieces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Reasoning text; each piece is one ``delta.<field>`` (DashScope / DeepSeek / vLLM send
    ``reasoning_content``; Ollama and OpenRouter ``reasoning``)."""

    pieces: tuple[str, ...]
    field: str = "reasoning_content"


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """One tool call. ``arguments`` is a mapping (sent as its JSON) or the raw text to send,
    which need not be valid JSON."""

    name: str
    arguments: Mapping[str, Any] | str
    id: str | None = None  # default: call_scripted_<tool call index>
    chunks: int = 3

    @property
    def encoded(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), separators=(",", ":"))


Part = TextPart | ReasoningPart | ToolCallPart


def text(*pieces: str) -> TextPart:
    if not pieces:
        raise ValueError("text() needs at least one piece")
    return TextPart(pieces=pieces)


def reasoning(*pieces: str, field: str = "reasoning_content") -> ReasoningPart:
    if not pieces:
        raise ValueError("reasoning() needs at least one piece")
    return ReasoningPart(pieces=pieces, field=field)


def tool_call(
    name: str, arguments: Mapping[str, Any] | str, *, id: str | None = None, chunks: int = 3
) -> ToolCallPart:
    args = arguments if isinstance(arguments, str) else dict(arguments)
    return ToolCallPart(name=name, arguments=args, id=id, chunks=max(1, chunks))


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamReply:
    """A 200 ``text/event-stream`` answer built from parts."""

    parts: tuple[Part, ...] = ()
    # None: "tool_calls" when a part is a tool call, else "stop". "length", "content_filter"…
    finish_reason: str | None = None
    prompt_tokens: int = 10
    completion_tokens: int = 5
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens
    model: str | None = None  # default: the model the request named
    completion_id: str | None = None  # default: chatcmpl-scripted-<request number>
    # (type, message): sent as a `data: {"error": …}` line after the parts, instead of the
    # finish chunk, usage and [DONE].
    error: tuple[str, str] | None = None

    def payloads(self, request_body: Any = None, *, number: int = 1) -> list[Any]:
        """The JSON payloads of the ``data:`` lines, in order; the last is "[DONE]"."""
        body = request_body if isinstance(request_body, dict) else {}
        base = {
            "id": self.completion_id or f"chatcmpl-scripted-{number:04d}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model or body.get("model") or "scripted-model",
            "system_fingerprint": "fp_scripted",
        }
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "choices": [choice], **({"usage": None} if with_usage else {})}

        out: list[Any] = [chunk({"role": "assistant", "content": "", "refusal": None})]
        out += [chunk(delta) for delta in _deltas(self.parts)]
        if self.error is not None:
            error_type, message = self.error
            out.append({"error": error_object(message, error_type, None)})
            return out
        out.append(chunk({}, self.finish_reason or _default_finish(self.parts)))
        if with_usage:
            out.append({**base, "choices": [], "usage": self.usage()})
        out.append("[DONE]")
        return out

    def usage(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
        if self.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return usage


def _default_finish(parts: Sequence[Part]) -> str:
    return "tool_calls" if any(isinstance(p, ToolCallPart) for p in parts) else "stop"


def _deltas(parts: Sequence[Part]) -> Iterator[dict[str, Any]]:
    calls = 0
    for part in parts:
        match part:
            case TextPart(pieces=pieces):
                for piece in pieces:
                    yield {"content": piece}
            case ReasoningPart(pieces=pieces, field=name):
                for piece in pieces:
                    yield {name: piece}
            case ToolCallPart(name=name, id=id_, chunks=chunks):
                index = calls
                calls += 1
                yield {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": id_ or f"call_scripted_{index:02d}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
                encoded = part.encoded
                size = max(1, -(-len(encoded) // chunks))
                for offset in range(0, len(encoded), size):
                    piece = encoded[offset : offset + size]
                    yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            case _:
                raise TypeError(f"not a stream part: {part!r}")


def stream(
    *parts: Part,
    finish_reason: str | None = None,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    cached_tokens: int | None = None,
    **options: Any,
) -> StreamReply:
    """A streamed completion. ``options`` are the other :class:`StreamReply` fields."""
    return StreamReply(
        parts=parts,
        finish_reason=finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_tokens=cached_tokens,
        **options,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReply:
    """An HTTP error status with OpenAI's error JSON."""

    status: int
    message: str
    error_type: str = "invalid_request_error"
    code: str | None = None
    retry_after: float | None = 0.001  # seconds, the `retry-after` header; None: not sent
    should_retry: bool | None = None  # sets x-should-retry, overriding the SDK's policy
    headers: Mapping[str, str] = field(default_factory=dict)


def http_error(
    status: int,
    message: str = "The server had an error while processing your request.",
    *,
    error_type: str = "server_error",
    code: str | None = None,
    retry_after: float | None = 0.001,
    should_retry: bool | None = None,
    headers: Mapping[str, str] | None = None,
) -> ErrorReply:
    return ErrorReply(
        status=status,
        message=message,
        error_type=error_type,
        code=code,
        retry_after=retry_after,
        should_retry=should_retry,
        headers=dict(headers or {}),
    )


def rate_limited(message: str = "Rate limit reached for requests", **kwargs: Any) -> ErrorReply:
    return http_error(429, message, error_type="requests", code="rate_limit_exceeded", **kwargs)


def auth_failed(message: str = "Incorrect API key provided.", **kwargs: Any) -> ErrorReply:
    return http_error(
        401, message, error_type="invalid_request_error", code="invalid_api_key", **kwargs
    )


def server_error(
    message: str = "The server had an error while processing your request.", **kwargs: Any
) -> ErrorReply:
    return http_error(500, message, error_type="server_error", **kwargs)


def context_overflow(
    message: str = (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130512 tokens. Please reduce the length of the messages."
    ),
    **kwargs: Any,
) -> ErrorReply:
    return http_error(
        400, message, error_type="invalid_request_error", code="context_length_exceeded", **kwargs
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RawSSE:
    """A 200 event stream of exactly these ``data:`` payloads (JSON-able, or a str sent as
    is, e.g. "[DONE]")."""

    payloads: Sequence[Any]


Reply = StreamReply | ErrorReply | RawSSE


def error_object(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"message": message, "type": error_type, "param": None, "code": code}
