"""One order for every provider's failures: which error a status and a provider's word make."""

from datetime import UTC, datetime

import pytest

from adapters.llm.status_errors import (
    ProviderFailure,
    model_error,
    retry_after_of,
    should_retry_of,
)
from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
    ModelUsageLimited,
)


def failure(status: int | None, **said: bool) -> ProviderFailure:
    return ProviderFailure(status, "the reason", cause=str(status), **said)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (failure(500), ModelUnavailable),
        (failure(503, overflow=True), ModelUnavailable),  # a server's failure, whatever it says
        (failure(200, server_failed=True, rate_limited=True), ModelUnavailable),
        (failure(401), ModelAuthFailed),
        (failure(403, overflow=True), ModelAuthFailed),
        (failure(None, auth_failed=True), ModelAuthFailed),
        (failure(429), ModelRateLimited),
        (failure(429, overflow=True), ModelRateLimited),
        (failure(None, rate_limited=True), ModelRateLimited),
        (failure(400, overflow=True), ContextOverflow),
        (failure(None, overflow=True, unexplained=True), ContextOverflow),
        (failure(None, unexplained=True), ModelUnavailable),
        (failure(400), ModelRequestRejected),
        (failure(None), ModelRequestRejected),  # a provider's word that fits nothing above
    ],
)
def test_each_failure_is_decided_in_one_order(
    case: ProviderFailure, expected: type[ModelError]
) -> None:
    assert type(model_error(case)) is expected


def test_an_authentication_failure_names_what_was_rejected_and_the_status() -> None:
    error = model_error(ProviderFailure(401, "bad", cause="401", credentials="the key in K"))
    assert str(error) == "The provider rejected the key in K (401): bad"
    assert error.details == {"status": 401}


@pytest.mark.parametrize(
    ("status", "detail", "said"),
    [
        (429, "You exceeded your current quota, please check your plan and billing", {}),
        (None, "Monthly usage limit reached", {"rate_limited": True}),
        (400, "Your credit balance is too low to access the API", {}),
        (402, "Payment required", {}),
    ],
)
def test_a_quota_or_billing_limit_is_a_usage_limit(
    status: int | None, detail: str, said: dict[str, bool]
) -> None:
    error = model_error(ProviderFailure(status, detail, cause=str(status), **said))
    assert type(error) is ModelUsageLimited
    assert error.kind == "usage_limit"


def test_a_plain_rate_limit_carries_the_wait_the_provider_asked_for() -> None:
    error = model_error(
        ProviderFailure(429, "slow down", cause="429", retry_after=2.0, should_retry=True)
    )
    assert type(error) is ModelRateLimited
    assert (error.retry_after, error.should_retry) == (2.0, True)


NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the precise one first
        ({"retry-after": "Thu, 01 Jan 2026 12:01:00 GMT"}, 60.0),
        ({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, 0.0),  # a date gone by: now
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_in_every_spelling(
    headers: dict[str, str] | None, seconds: float | None
) -> None:
    assert retry_after_of(headers, now=NOW) == seconds


@pytest.mark.parametrize(
    ("value", "said"), [("true", True), ("false", False), ("maybe", None), (None, None)]
)
def test_x_should_retry(value: str | None, said: bool | None) -> None:
    assert should_retry_of({} if value is None else {"x-should-retry": value}) is said
