"""A provider's failure as our error, decided in one order for every provider.

Each adapter reads its SDK's exception into a `ProviderFailure` (the status, the provider's
own word for what went wrong, whether the text says the request was too long); this module
alone decides which `ModelError` that is, so the two providers cannot drift apart again."""

from dataclasses import dataclass

from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
)


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


def model_error(failure: ProviderFailure) -> ModelError:
    """The order: the provider's own failure (a retry later may work), then the two the
    user must act on (credentials, limits), then a request too long for the window (the
    turn can compact and go on), then a failure nothing explained (counted as the
    provider's: it came mid-stream), else the request itself was refused."""
    f, status = failure, failure.status
    if f.server_failed or (status is not None and status >= 500):
        return ModelUnavailable(f"The provider failed ({f.cause}): {f.detail}", status=status)
    if f.auth_failed or status in (401, 403):
        return ModelAuthFailed(
            f"The provider rejected {f.credentials} ({f.cause}): {f.detail}", status=status
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
