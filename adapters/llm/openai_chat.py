"""OpenAI-compatible chat completions (OpenAI, DashScope, DeepSeek, vLLM, Ollama, LM Studio)
through the official `openai` SDK, streaming, with tools.

Usage::

    client = make_openai_client(api_key=key, base_url=profile.base_url, max_retries=2,
                                timeout=600.0, key_optional=profile.key_optional)
    llm = OpenAIChatClient(client=client, dialect=profile.dialect, key_env=profile.key_env)

A tool call whose arguments are not a JSON object becomes a ToolUseBlock with input
``{INVALID_ARGUMENTS: "<the raw text>"}``, so the tool phase answers the model with an error
instead of the turn failing."""

import json
import logging
import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import openai
from openai import AsyncOpenAI

from adapters.llm.attempts import TellsAttempts, retry_headers, safe_url
from adapters.llm.providers import Dialect
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
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from domain.content import (
    AssistantBlock,
    ContentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    as_model_text,
)
from domain.message import Message, Role
from domain.stop_reason import ModelStop
from domain.usage import Usage

log = logging.getLogger(__name__)

INVALID_ARGUMENTS: Final = "_invalid_arguments"
# Local servers (vLLM, Ollama) take any key; the SDK insists on one.
PLACEHOLDER_KEY: Final = "not-needed"

_STOPS: Final = {
    "stop": ModelStop.END_TURN,
    "tool_calls": ModelStop.TOOL_USE,
    "function_call": ModelStop.TOOL_USE,
    "length": ModelStop.MAX_TOKENS,
    "content_filter": ModelStop.REFUSAL,
}

# --- requests -------------------------------------------------------------------------------


def messages_to_api(system: str, messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Domain history as chat messages: the system prompt first; an assistant turn as its text
    and tool calls (thinking is never sent: another provider's, or not replayable); tool
    results as one `tool` message each, right after the assistant message they answer."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role is Role.ASSISTANT:
            out.extend(_assistant_to_api(message.content))
        else:
            out.extend(_user_to_api(message.content))
    return out


def _assistant_to_api(blocks: tuple[ContentBlock, ...]) -> list[dict[str, Any]]:
    text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(dict(b.input))},
        }
        for b in blocks
        if isinstance(b, ToolUseBlock)
    ]
    if not text and not calls:
        return []  # only thinking: nothing the provider can take back
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _user_to_api(blocks: tuple[ContentBlock, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": b.tool_use_id,
            "content": f"Error: {b.content}" if b.is_error else b.content,
        }
        for b in blocks
        if isinstance(b, ToolResultBlock)
    ]
    # Images reach here only for a model that reads them (the model view made markers else).
    shown = [as_model_text(b, images=True) for b in blocks if not isinstance(b, ToolResultBlock)]
    parts = [p for p in map(_user_part, shown) if p is not None]
    if any(p["type"] == "image_url" for p in parts):
        out.append({"role": "user", "content": parts})
    elif parts:
        # Plain text as a string: some compatible servers take no content-part lists.
        out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
    return out


def _user_part(block: ContentBlock) -> dict[str, Any] | None:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ImageBlock(mime_type=mime, data=str() as data):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    log.info("not sending a %s block to the model", type(block).__name__)
    return None


def request_to_api(request: ModelRequest, dialect: Dialect) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": messages_to_api(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    # OpenAI's reasoning models refuse `max_tokens`; other servers may not know the new name.
    limit = "max_completion_tokens" if dialect is Dialect.OPENAI else "max_tokens"
    kwargs[limit] = request.max_tokens
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in request.tools
        ]
    if request.reasoning_effort:
        kwargs["reasoning_effort"] = request.reasoning_effort
    if dialect is Dialect.DASHSCOPE and request.thinking_budget > 0:
        kwargs["extra_body"] = {"enable_thinking": True, "thinking_budget": request.thinking_budget}
    return kwargs


# --- the stream -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def block(self, index: int) -> ToolUseBlock:
        raw = "".join(self.arguments)
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            log.info("tool call %s came with arguments that are not a JSON object", self.name)
            parsed = {INVALID_ARGUMENTS: raw}
        return ToolUseBlock(id=self.id or f"call_{index}", name=self.name, input=parsed)


@dataclass(slots=True)
class _Answer:
    """What the stream has said so far."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)

    def take(self, chunk: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if chunk.usage is not None:
            self.usage = usage_from_api(chunk.usage)
        for choice in chunk.choices or ():
            if choice.finish_reason:
                self.finish = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            thought = _reasoning(delta)
            if thought:
                self.thinking.append(thought)
                events.append(ThinkingChunk(text=thought))
            if delta.content:
                self.text.append(delta.content)
                events.append(TextChunk(text=delta.content))
            for call in delta.tool_calls or ():
                if (started := self._take_call(call)) is not None:
                    events.append(started)
        return events

    def _take_call(self, delta: Any) -> ToolUseStarted | None:
        """The call's fragment; ToolUseStarted once both its id and name have come (a
        server that sends no id gets one made up at the end: no early announcement)."""
        call = self.calls.setdefault(delta.index, _Call())
        known = bool(call.id and call.name)
        if delta.id:
            call.id = delta.id
        function = delta.function
        if function is not None:
            if function.name:
                call.name = function.name
            if function.arguments:
                call.arguments.append(function.arguments)
        if not known and call.id and call.name:
            return ToolUseStarted(id=call.id, name=call.name)
        return None

    def response(self) -> ModelResponse:
        content: list[AssistantBlock] = []
        if self.thinking:
            content.append(ThinkingBlock(thinking="".join(self.thinking)))
        if self.text:
            content.append(TextBlock(text="".join(self.text)))
        content += [self.calls[i].block(i) for i in sorted(self.calls)]
        stop = _STOPS.get(self.finish or "stop", ModelStop.END_TURN)
        # Some servers (older vLLM, Ollama) say "stop" after streaming tool calls.
        if self.calls and stop is ModelStop.END_TURN:
            stop = ModelStop.TOOL_USE
        return ModelResponse(content=tuple(content), stop=stop, usage=self.usage)


def _reasoning(delta: Any) -> str | None:
    """DashScope, DeepSeek and vLLM stream `reasoning_content`; Ollama and others `reasoning`.
    Neither is in the SDK's model, which keeps unknown fields as extras."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def usage_from_api(usage: Any) -> Usage:
    prompt = usage.prompt_tokens or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None:  # DeepSeek reports its cache hits in its own field
        cached = getattr(usage, "prompt_cache_hit_tokens", None)
    cached = min(int(cached or 0), prompt)
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
    )


# --- errors ---------------------------------------------------------------------------------

# How servers word a request over the window: OpenAI and vLLM "maximum context length is …",
# DashScope "Range of input length should be [1, 129024]", others "… too long".
_OVERFLOW_WORDS: Final = ("maximum context length", "context length", "too long", "input length")
_OVERFLOW_CODES: Final = ("context_length_exceeded", "string_above_max_length")
# Providers quote part of a rejected key ("Incorrect API key provided: sk-abc***xyz").
_KEYISH: Final = re.compile(r"\b(?:sk|key)-\S+", re.IGNORECASE)


def translate_error(
    exc: openai.OpenAIError,
    *,
    key_env: str | None = None,
    key: str | None = None,
    attempts: int | None = None,
) -> ModelError:
    """SDK errors to ours, with the provider's status and reason but never a key (`key`, the
    one in use, is struck out wherever the provider quotes it, whatever its shape).
    `attempts`: how many the SDK made, for an unreachable provider's `data`."""
    if isinstance(exc, openai.APIConnectionError):  # a timeout is one too
        url = safe_url(exc.request.url)
        said = "did not answer in time" if isinstance(exc, openai.APITimeoutError) else ""
        message = (
            f"The provider at {url} {said}." if said else f"Could not reach the provider at {url}."
        )
        extra = {"attempts": attempts} if attempts else {}
        return ModelUnavailable(message, url=url, **extra)
    if not isinstance(exc, openai.APIError):
        return ModelError(f"The provider failed: {type(exc).__name__}")
    status: int | None = getattr(exc, "status_code", None)
    detail = _detail(exc)
    if key:
        detail = detail.replace(key, "[redacted]")
    detail = _KEYISH.sub("[redacted]", detail)
    response = exc.response if isinstance(exc, openai.APIStatusError) else None
    headers = response.headers if response is not None else None
    return model_error(
        ProviderFailure(
            status,
            detail,
            cause=str(status or "mid-stream"),
            overflow=_is_overflow(exc.code, detail),
            unexplained=status is None,
            credentials=f"the key in {key_env}" if key_env else "the key",
            retry_after=retry_after_of(headers),
            should_retry=should_retry_of(headers),
        )
    )


def _is_overflow(code: str | None, detail: str) -> bool:
    return code in _OVERFLOW_CODES or any(w in detail.lower() for w in _OVERFLOW_WORDS)


def _detail(exc: openai.APIError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    message = body.get("message")
    return str(message or exc.message)[:300]


# --- the adapter ----------------------------------------------------------------------------


class OpenAIChatClient(LLMClient):
    """Streams `chat.completions.create(stream=True)`. Asks once when its SDK client's
    retries are off, as the server makes it (the turn asks again:
    application.use_cases.provider_retry); the SDK's errors become ours, with the
    provider's retry-after and x-should-retry.

    `dialect` is how the endpoint differs from OpenAI's (adapters.llm.providers);
    `key_env` names the variable the key came from, for an authentication error's message."""

    def __init__(
        self,
        *,
        client: AsyncOpenAI | None,
        dialect: Dialect = Dialect.GENERIC,
        key_env: str | None = None,
    ) -> None:
        self._client = client
        self._dialect = dialect
        self._key_env = key_env

    def has_credentials(self) -> bool:
        return self._client is not None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self._client is None:
            where = f" (set {self._key_env})" if self._key_env else ""
            raise ModelAuthFailed(f"No API key is configured for the provider{where}.")
        answer = _Answer()
        kwargs = request_to_api(request, self._dialect)
        if headers := retry_headers(request.attempt):
            kwargs["extra_headers"] = headers
        try:
            chunks = await self._client.chat.completions.create(**kwargs)
            async with chunks:
                async for chunk in chunks:
                    for event in answer.take(chunk):
                        yield event
        except openai.OpenAIError as exc:
            raise translate_error(
                exc,
                key_env=self._key_env,
                key=self._client.api_key,
                attempts=self._client.max_retries + 1,
            ) from exc
        except Exception as exc:
            # The SDK's HTTP layer raises its own transport errors (read timeouts, dropped
            # connections) while the body streams; the port promises ModelError only.
            log.warning("model stream failed: %s: %s", type(exc).__name__, exc)
            raise ModelUnavailable(
                f"The connection to the provider failed ({type(exc).__name__})."
            ) from exc
        yield answer.response()


def make_openai_client(
    *,
    api_key: str | None,
    base_url: str | None,
    max_retries: int,
    timeout: float,
    key_optional: bool = False,
    told_attempts: int | None = None,
) -> AsyncOpenAI | None:
    """The SDK client, or None when there is no key and the provider needs one. A provider
    whose key is optional (a local server) gets a placeholder key instead. `max_retries`:
    the SDK's own (the server passes 0: the turn asks again itself); `told_attempts`: how
    many tries each failed one is told out of (default: the SDK's)."""
    if not api_key:
        if not key_optional:
            return None
        api_key = PLACEHOLDER_KEY
    attempts = told_attempts or max_retries + 1
    client = AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=timeout,
        http_client=_AttemptsTold(attempts=attempts),
    )
    log.info("model requests go to %s (%d attempts each)", safe_url(client.base_url), attempts)
    return client


class _AttemptsTold(TellsAttempts, openai.DefaultAsyncHttpxClient):
    """The SDK's own HTTP client (its defaults kept), telling each failed attempt."""
