"""The Anthropic Messages API through the official SDK, streaming."""

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anthropic
from anthropic import AsyncAnthropic

from adapters.llm.anthropic_stream import MessageAssembly, StreamFailed, model_events
from adapters.llm.attempts import TellsAttempts, retry_headers, safe_url
from adapters.llm.status_errors import (
    ProviderFailure,
    model_error,
    retry_after_of,
    should_retry_of,
)
from application.errors import (
    ModelAuthFailed,
    ModelError,
    ModelUnavailable,
)
from application.ports.llm import (
    LLMClient,
    ModelEvent,
    ModelRequest,
    ModelResponse,
)
from application.ports.tools import ToolDefinition
from domain.block_dicts import turn_block_dict
from domain.content import (
    ContentBlock,
    ImageBlock,
)
from domain.message import Message
from domain.stop_reason import ModelStop

log = logging.getLogger(__name__)

_STOPS = {
    "end_turn": ModelStop.END_TURN,
    "stop_sequence": ModelStop.END_TURN,
    "max_tokens": ModelStop.MAX_TOKENS,
    "model_context_window_exceeded": ModelStop.MAX_TOKENS,
    "refusal": ModelStop.REFUSAL,
    "tool_use": ModelStop.TOOL_USE,
    "pause_turn": ModelStop.PAUSE,
}


def block_to_api(block: ContentBlock) -> dict[str, Any]:
    if (common := turn_block_dict(block, no_signature="")) is not None:
        return common
    if isinstance(block, ImageBlock) and isinstance(block.data, str):
        source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
        return {"type": "image", "source": source}
    raise TypeError(f"{type(block).__name__} must be turned into text before the request")


def messages_to_api(messages: Iterable[Message]) -> list[dict[str, Any]]:
    return [
        {"role": m.role.value, "content": [block_to_api(b) for b in m.content]} for m in messages
    ]


# Prompt caching: a breakpoint caches the request's prefix up to and including its block
# (the API orders the prefix tools, system, messages). We mark the end of the tools, the
# system prompt and the whole conversation: every later request of a turn repeats that
# conversation and adds to it, so it reads all of it from the cache. Three of the API's
# four allowed breakpoints.
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Thinking blocks (signed or redacted) cannot carry a breakpoint.
_CACHEABLE = frozenset({"text", "tool_use", "tool_result", "image"})


def system_to_api(system: str) -> str | list[dict[str, Any]]:
    """The system prompt as one text block with a breakpoint; an empty one as it is (the
    API refuses an empty text block)."""
    if not system:
        return system
    return [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]


def tools_to_api(tools: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """The tool definitions, with a breakpoint on the last."""
    api = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]
    if api:
        api[-1]["cache_control"] = dict(EPHEMERAL)
    return api


def with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of API messages with a breakpoint on the last block that can carry one
    (normally the last block of the last message). The input is left as it was."""
    marked = list(messages)
    for i in range(len(marked) - 1, -1, -1):
        content = marked[i]["content"]
        for j in range(len(content) - 1, -1, -1):
            if content[j].get("type") in _CACHEABLE:
                blocks = list(content)
                blocks[j] = {**content[j], "cache_control": dict(EPHEMERAL)}
                marked[i] = {**marked[i], "content": blocks}
                return marked
    return marked


_UNAVAILABLE_TYPES = {"overloaded_error", "api_error"}


def translate_error(exc: anthropic.AnthropicError, *, attempts: int | None = None) -> ModelError:
    """SDK errors to ours. Messages carry the provider's reason but never credentials.

    The error type in the body decides first: an `event: error` inside a stream arrives
    with the stream's status, 200, so the status alone would misfile an overload.
    `attempts`: how many the SDK made, for an unreachable provider's `data`."""
    if isinstance(exc, anthropic.APIConnectionError):  # a timeout is one too
        url = safe_url(exc.request.url)
        said = "did not answer in time" if isinstance(exc, anthropic.APITimeoutError) else ""
        message = (
            f"The provider at {url} {said}." if said else f"Could not reach the provider at {url}."
        )
        extra = {"attempts": attempts} if attempts else {}
        return ModelUnavailable(message, url=url, **extra)
    if not isinstance(exc, anthropic.APIError):
        return ModelError(f"The provider failed: {type(exc).__name__}")
    status = getattr(exc, "status_code", None)
    error_type, detail = _error_body(exc)
    response = exc.response if isinstance(exc, anthropic.APIStatusError) else None
    headers = response.headers if response is not None else None
    error = classified(status, error_type, detail, retry_after=retry_after_of(headers))
    error.should_retry = should_retry_of(headers)
    return error


def classified(
    status: int | None, error_type: str | None, detail: str, *, retry_after: float | None = None
) -> ModelError:
    """Our error for the provider's status and error type (a stream's `error` event has
    no status of its own)."""
    return model_error(
        ProviderFailure(
            status,
            detail,
            cause=str(status or error_type or "no reason given"),
            server_failed=error_type in _UNAVAILABLE_TYPES,
            auth_failed=error_type in ("authentication_error", "permission_error"),
            rate_limited=error_type == "rate_limit_error",
            overflow=_is_overflow(detail),
            unexplained=status is None and error_type is None,
            retry_after=retry_after,
        )
    )


# How the API words a request over the context window ("prompt is too long: 208310 tokens >
# 200000 maximum", "input length and `max_tokens` exceed context limit: …").
_OVERFLOW_WORDS = ("prompt is too long", "exceed context limit", "context window")


def _is_overflow(detail: str) -> bool:
    lowered = detail.lower()
    return any(words in lowered for words in _OVERFLOW_WORDS)


def _error_body(exc: anthropic.APIError) -> tuple[str | None, str]:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    error_type = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return error_type, str(message or exc.message)[:300]


class AnthropicLLMClient(LLMClient):
    """Sends with the SDK and reads the event stream itself (adapters.llm.anthropic_stream).
    Asks once when its SDK client's retries are off, as the server makes it (the turn asks
    again: application.agent_loop.provider_retry); the SDK's errors become ours, with the
    provider's retry-after and x-should-retry."""

    def __init__(self, *, client: AsyncAnthropic | None) -> None:
        self._client = client

    def has_credentials(self) -> bool:
        return self._client is not None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self._client is None:
            raise ModelAuthFailed("No API key is configured for the Anthropic provider.")
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": system_to_api(request.system),
            "messages": with_cache_breakpoint(messages_to_api(request.messages)),
        }
        if request.tools:
            kwargs["tools"] = tools_to_api(request.tools)
        if request.thinking_budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
        if headers := retry_headers(request.attempt):
            kwargs["extra_headers"] = headers
        assembly = MessageAssembly()
        try:
            async with self._client.messages.with_streaming_response.create(
                **kwargs, stream=True
            ) as response:
                body = response.http_response.aiter_bytes()  # decoded, one layer fewer
                async for event in model_events(body, assembly):
                    yield event
        except anthropic.AnthropicError as exc:
            raise translate_error(exc, attempts=self._client.max_retries + 1) from exc
        except StreamFailed as exc:
            if exc.error_type is None:  # cut short: nothing said why
                raise ModelUnavailable(f"The provider's answer broke off: {exc}") from exc
            raise classified(None, exc.error_type, exc.message) from exc
        except Exception as exc:
            # The SDK's HTTP layer raises its own transport errors (read timeouts, dropped
            # connections) while the body streams; the port promises ModelError only.
            log.warning("model stream failed: %s: %s", type(exc).__name__, exc)
            raise ModelUnavailable(
                f"The connection to the provider failed ({type(exc).__name__})."
            ) from exc
        stop = _STOPS.get(assembly.stop_reason or "end_turn", ModelStop.END_TURN)
        yield ModelResponse(content=assembly.content(), stop=stop, usage=assembly.usage())


def make_anthropic_client(
    *,
    api_key: str | None,
    base_url: str | None,
    max_retries: int,
    timeout: float,
    told_attempts: int | None = None,
) -> AsyncAnthropic | None:
    """`max_retries`: the SDK's own (the server passes 0: the turn asks again itself);
    `told_attempts`: how many tries each failed one is told out of (default: the SDK's)."""
    if not api_key:
        return None
    attempts = told_attempts or max_retries + 1
    client = AsyncAnthropic(
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=timeout,
        http_client=_AttemptsTold(attempts=attempts),
    )
    log.info("model requests go to %s (%d attempts each)", safe_url(client.base_url), attempts)
    return client


class _AttemptsTold(TellsAttempts, anthropic.DefaultAsyncHttpxClient):
    """The SDK's own HTTP client (its defaults kept), telling each failed attempt."""
