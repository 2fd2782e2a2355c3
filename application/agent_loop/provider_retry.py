"""Asking the provider again after a rate limit, an overload or an outage: one policy for
every provider (the SDKs' own retries are off), each wait told to the user as it passes.

- Retried: `ModelUnavailable` (5xx, 529, a connection that failed), `ModelRateLimited`,
  408 and 409 (as the SDKs did), unless the provider said not to (`x-should-retry:
  false`); only before anything of the reply was shown (asking again would show it twice).
- The wait is the provider's `retry-after` where it gave one, else 1, 2, 4 ... s (at most
  30). At most `max_retries` tries more, waiting at most `budget_seconds` in all.
- A usage limit (`ModelUsageLimited`: quota, billing), or a rate limit whose `retry-after`
  runs past the budget, will not clear soon: it ends the turn at once, saying when to try
  again.
- Each wait of a second or more is a countdown notice, repeated every `tick_seconds` (less
  than a transport's keepalive: a prompt never looks hung), with a one-line agent-text
  fallback for a client without notices. The wait is cancellable like any step of a turn.
"""

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from application.errors import ModelError, ModelRateLimited, ModelUnavailable, ModelUsageLimited
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelEvent, ModelRequest
from domain.events import Notice, NoticeSeverity, SessionNotice
from domain.ids import MessageId, SessionId

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryTerms:
    max_retries: int = 4  # IAC_CODE_MAX_RETRIES
    budget_seconds: float = 120.0  # IAC_CODE_PROVIDER_RETRY_SECONDS
    tick_seconds: float = 10.0  # a countdown notice at least this often while waiting
    first_backoff: float = 1.0
    max_backoff: float = 30.0
    told_from: float = 1.0  # shorter waits pass without a notice


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait:
    seconds: float
    attempt: int  # the try that follows the wait (2 for the first retry)
    error: ModelError


def next_wait(terms: RetryTerms, error: ModelError, attempt: int, waited: float) -> float | None:
    """Seconds to wait before asking again after try `attempt` failed (`waited`: already
    waited for this request); None: do not ask again."""
    if not retryable(error):
        return None
    if error.retry_after is not None:
        seconds = error.retry_after
    else:
        seconds = min(terms.first_backoff * 2 ** (attempt - 1), terms.max_backoff)
    if attempt > terms.max_retries or waited + seconds > terms.budget_seconds:
        return None
    return seconds


# Statuses the SDKs asked again besides 429 and 5xx: a request timeout, a lock conflict.
_ALSO_RETRIED = frozenset({408, 409})


def retryable(error: ModelError) -> bool:
    """A failure asking again may clear: an outage, an overload, a rate limit (not a usage
    limit), 408 and 409; never one the provider said not to retry (`x-should-retry`)."""
    if error.should_retry is False or isinstance(error, ModelUsageLimited):
        return False
    if isinstance(error, ModelRateLimited | ModelUnavailable):
        return True
    return error.details.get("status") in _ALSO_RETRIED


class QuietRetry(LLMClient):
    """The same policy for requests that are not a turn's reply (a compaction's summary):
    asked again before anything arrived, the waits not told (they were not before the SDKs'
    retries were turned off either)."""

    def __init__(self, *, llm: LLMClient, terms: RetryTerms, sleep: Sleep = asyncio.sleep) -> None:
        self._llm = llm
        self._terms = terms
        self._sleep = sleep

    def has_credentials(self) -> bool:
        return self._llm.has_credentials()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        attempt, waited = request.attempt, 0.0
        while True:
            started = False
            try:
                async for event in self._llm.stream(replace(request, attempt=attempt)):
                    started = True
                    yield event
                return
            except ModelError as exc:
                seconds = None if started else next_wait(self._terms, exc, attempt, waited)
                if seconds is None:
                    raise
            await self._sleep(seconds)
            waited += seconds
            attempt += 1


def _reason(error: ModelError) -> str:
    if isinstance(error, ModelRateLimited):
        return "Rate limited by the provider"
    return "The provider is unavailable"


def _clock_time(at: datetime) -> str:
    return at.strftime("%H:%M:%S UTC")


class ProviderRetry:
    """Decides whether a failed request is asked again, and tells each wait."""

    def __init__(
        self,
        *,
        terms: RetryTerms,
        sink: EventSink,
        clock: Clock,
        ids: IdGenerator,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.terms = terms
        self._sink = sink
        self._clock = clock
        self._ids = ids
        self._sleep = sleep

    @property
    def attempts(self) -> int:
        return self.terms.max_retries + 1

    def wait_after(self, error: ModelError, attempt: int, waited: float) -> Wait | None:
        """The wait before the next try after `attempt` failed with `error` (`waited`: the
        seconds already waited this request); None: raise it. Raises ModelUsageLimited for
        a limit that will not clear within the budget."""
        if isinstance(error, ModelUsageLimited):
            raise self._limited(error, error.retry_after)
        seconds = next_wait(self.terms, error, attempt, waited)
        if seconds is None:
            past_budget = error.retry_after is not None and (
                waited + error.retry_after > self.terms.budget_seconds
            )
            if isinstance(error, ModelRateLimited) and past_budget:
                raise self._limited(error, error.retry_after)
            return None
        return Wait(seconds=seconds, attempt=attempt + 1, error=error)

    def _limited(self, error: ModelError, retry_after: float | None) -> ModelUsageLimited:
        details = dict(error.details)
        message = f"{error} The limit will not clear soon"
        if retry_after is not None:
            at = self._clock.now() + timedelta(seconds=retry_after)
            details.update(retryAfter=math.ceil(retry_after), retryAt=at.isoformat())
            message += f": try again after {_clock_time(at)}."
        else:
            message += ": try again later."
        limited = ModelUsageLimited(message, **details)
        limited.retry_after = retry_after
        return limited

    async def wait(self, session_id: SessionId, wait: Wait) -> None:
        """Sleep through `wait`, telling the countdown every tick."""
        left = wait.seconds
        if left < self.terms.told_from:
            await self._sleep(left)
            return
        fallback_id = self._ids.message_id()
        first = True
        while left > 0:
            await self._sink.emit(session_id, self._countdown(wait, left, fallback_id, first))
            first = False
            step = min(self.terms.tick_seconds, left)
            await self._sleep(step)
            left -= step

    def _countdown(
        self, wait: Wait, left: float, fallback_id: MessageId, first: bool
    ) -> SessionNotice:
        seconds = math.ceil(left)
        title = (
            f"{_reason(wait.error)}: retrying in {seconds} s "
            f"(attempt {wait.attempt} of {self.attempts})"
        )
        meta = {
            "retry": {
                "reason": wait.error.kind,
                "secondsLeft": seconds,
                "attempt": wait.attempt,
                "maxAttempts": self.attempts,
                "status": wait.error.details.get("status"),
            }
        }
        # The agent text once per wait: a transcript should not fill up with countdowns.
        fallback = Notice(message_id=fallback_id, text=f"\n[{title}]\n") if first else None
        return SessionNotice(
            severity=NoticeSeverity.WARNING,
            title=title,
            description=str(wait.error),
            meta=meta,
            fallback=fallback,
        )


def failure_notice(error: ModelError, fallback_id: MessageId) -> SessionNotice:
    """How a provider failure that ends the turn is told: an error notice (with when to
    try again, where known), or as before notices, one line of agent text."""
    retry_at = error.details.get("retryAt")
    if isinstance(error, ModelUsageLimited):
        title = "Usage limit reached"
        if isinstance(retry_at, str):
            title += f": try again after {_clock_time(datetime.fromisoformat(retry_at))}"
    else:
        title = "The model provider failed"
    meta: dict[str, object] = {"kind": error.kind}
    if retry_at is not None:
        meta["retryAt"] = retry_at
    return SessionNotice(
        severity=NoticeSeverity.ERROR,
        title=title,
        description=str(error),
        meta={"providerError": meta},
        fallback=Notice(message_id=fallback_id, text=f"\n\n[model provider error: {error}]"),
    )
