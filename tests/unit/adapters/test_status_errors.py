"""One order for every provider's failures: which error a status and a provider's word make."""

import pytest

from adapters.llm.status_errors import ProviderFailure, model_error
from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
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
