"""A provider's failure as our error, decided in one order for every provider.

Each adapter reads its SDK's exception into a `ProviderFailure` (the status, the provider's
own word for what went wrong, whether the text says the request was too long); this module
alone decides which `ModelError` that is, so the two providers cannot drift apart again."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
    ModelUsageLimited,
)

# How providers word a limit that waiting a little will not lift (OpenAI's code
# `insufficient_quota`, "You exceeded your current quota", Anthropic's "credit balance is
# too low", "billing"...).
_USAGE_WORDS = ("quota", "billing", "credit balance", "spend limit", "usage limit")


@dataclass(frozen=True, slots=True)
class ProviderFailure:
    status: int | None  # None: an error sent inside a stream that began with 200
    detail: str  # the provider's reason, already cleared of anything secret
    cause: str  # what the message names as the cause: the status, the error type
    # The provider's own word, where it has one besides the status (Anthropic's types):
    server_failed: bool = False  # an overload or internal error
    auth_failed: bool = False
    rate_limited: bool = False
    overflow: bool = False  # the reason says the request is longer than the context window
    unexplained: bool = False  # neither a status nor an error type said anything
    credentials: str = "the credentials"  # what an authentication failure names
    retry_after: float | None = None  # seconds the provider asked us to wait (retry-after)
    should_retry: bool | None = None  # the provider's `x-should-retry`, where it sent one


def model_error(failure: ProviderFailure) -> ModelError:
    error = _kind_of(failure)
    error.retry_after = failure.retry_after
    error.should_retry = failure.should_retry
    return error


def _kind_of(failure: ProviderFailure) -> ModelError:
    """The order: the provider's own failure (a retry later may work), then the two the
    user must act on (credentials, limits: a usage, quota or billing limit before a rate
    limit), then a request too long for the window (the
    turn can compact and go on), then a failure nothing explained (counted as the
    provider's: it came mid-stream), else the request itself was refused."""
    f, status = failure, failure.status
    if f.server_failed or (status is not None and status >= 500):
        return ModelUnavailable(f"The provider failed ({f.cause}): {f.detail}", status=status)
    if f.auth_failed or status in (401, 403):
        return ModelAuthFailed(
            f"The provider rejected {f.credentials} ({f.cause}): {f.detail}", status=status
        )
    if status == 402 or ((f.rate_limited or status in (400, 429)) and _says_usage(f.detail)):
        return ModelUsageLimited(
            f"The provider's usage limit is reached: {f.detail}", status=status
        )
    if f.rate_limited or status == 429:
        return ModelRateLimited(f"Rate limited by the provider: {f.detail}", status=status)
    if f.overflow:
        return ContextOverflow(f"The request is too long for the model: {f.detail}", status=status)
    if f.unexplained:
        return ModelUnavailable(f"The provider failed ({f.cause}): {f.detail}", status=status)
    return ModelRequestRejected(
        f"The provider rejected the request ({f.cause}): {f.detail}", status=status
    )


def _says_usage(detail: str) -> bool:
    lowered = detail.lower()
    return any(words in lowered for words in _USAGE_WORDS)


def retry_after_of(
    headers: Mapping[str, str] | None, *, now: datetime | None = None
) -> float | None:
    """The wait a response asks for, in seconds: `retry-after-ms`, else `retry-after` as
    seconds or as an HTTP date; None when it asks for none (or says it unreadably)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        seconds: float | None
        try:
            seconds = float(value) * scale
        except ValueError:
            seconds = _seconds_until(value, now)
        if seconds is not None and seconds >= 0:
            return seconds
    return None


def should_retry_of(headers: Mapping[str, str] | None) -> bool | None:
    """The provider's `x-should-retry` (`true`/`false`); None when it sent none."""
    value = headers.get("x-should-retry") if headers is not None else None
    if value == "true":
        return True
    if value == "false":
        return False
    return None


def _seconds_until(date: str, now: datetime | None) -> float | None:
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
