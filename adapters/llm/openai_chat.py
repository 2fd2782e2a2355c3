"""OpenAI-compatible chat completions (OpenAI, DashScope, DeepSeek, vLLM, Ollama, LM Studio)
through the official `openai` SDK, streaming, with tools.

Usage::

    client = make_openai_client(api_key=key, base_url=profile.base_url, max_retries=2,
                                timeout=600.0, key_optional=profile.key_optional)
    llm = OpenAIChatClient(client=client, dialect=profile.dialect, key_env=profile.key_env)

The request in the API's shapes is openai_requests.py's; reading the streamed reply,
openai_replies.py's; here: the client, its errors, and the SDK client it sends with."""

import logging
import re
from collections.abc import AsyncIterator
from typing import Final

import openai
from openai import AsyncOpenAI

from adapters.llm.attempts import TellsAttempts, retry_headers, safe_url
from adapters.llm.openai_replies import StreamedAnswer
from adapters.llm.openai_requests import request_to_api
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
)

log = logging.getLogger(__name__)

# Local servers (vLLM, Ollama) take any key; the SDK insists on one.
PLACEHOLDER_KEY: Final = "not-needed"


# --- requests -------------------------------------------------------------------------------


# --- the stream -----------------------------------------------------------------------------


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
    application.agent_loop.provider_retry); the SDK's errors become ours, with the
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
        answer = StreamedAnswer()
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
