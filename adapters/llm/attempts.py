"""Every failed attempt at a provider, told on stderr, and its URL fit to be shown.

The SDKs retry a refused connection or a 5xx quietly (DEBUG at most) and then say only
"connection error": a wrong base URL looked like ten silent seconds. Both SDKs send each
attempt through their HTTP client's `send` and number it in `x-stainless-retry-count`, so
a client that wraps `send` can tell each failure as it happens, with the URL and the reason.
The server turns the SDKs' retries off and asks again itself (the turn's retries); each
try then carries its number in that header (`retry_headers`).
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx2

log = logging.getLogger(__name__)

# The statuses both SDKs retry (429 and 5xx included): a failed attempt even when answered.
_RETRIED = frozenset({408, 409, 429})
# Query parameters that may carry a credential (`?api_key=`, `?sig=`, `?access_token=`).
_SECRET_PARTS = ("key", "token", "secret", "password", "passwd", "sig", "auth", "credential")


def safe_url(url: str | httpx2.URL) -> str:
    """The URL without what may be a credential: no userinfo, no secret-looking query
    parameter, no fragment."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a number: shown as it was written, without the userinfo
        port = None
        host = parts.netloc.rpartition("@")[2]
    netloc = f"{host}:{port}" if port is not None else host
    query = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not any(part in name.lower() for part in _SECRET_PARTS)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))


RETRY_COUNT = "x-stainless-retry-count"


def retry_headers(attempt: int) -> dict[str, str]:
    """Extra headers for the `attempt`-th try at a request: the SDKs take a retry count
    given here over their own (0 with their retries off), so each try is told by number."""
    return {RETRY_COUNT: str(attempt - 1)} if attempt > 1 else {}


def attempt_of(request: httpx2.Request) -> int:
    """Which attempt this request is (1 for the first), from the SDKs' retry header."""
    try:
        return int(request.headers.get(RETRY_COUNT, "0")) + 1
    except ValueError:
        return 1


def tell_failure(request: httpx2.Request, attempts: int, reason: str) -> None:
    log.warning(
        "model provider: attempt %d of %d to %s failed: %s",
        attempt_of(request),
        attempts,
        safe_url(request.url),
        reason,
    )


Send = Callable[..., Awaitable[httpx2.Response]]


async def send_telling(
    send: Send, request: httpx2.Request, attempts: int, **kwargs: Any
) -> httpx2.Response:
    """`send(request)`, with one WARNING line when the attempt fails (the SDK retries it,
    or gives up with the last)."""
    try:
        response = await send(request, **kwargs)
    except Exception as exc:  # the SDKs retry any request error: each is told, then raised
        tell_failure(request, attempts, f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc))
        raise
    if response.status_code in _RETRIED or response.status_code >= 500:
        tell_failure(request, attempts, f"HTTP {response.status_code}")
    return response


class TellsAttempts(httpx2.AsyncClient):
    """Mixed in before an SDK's own HTTP client class (its defaults kept): each failed
    attempt is told (`send_telling`)."""

    def __init__(self, *, attempts: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._attempts = attempts

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        return await send_telling(super().send, request, self._attempts, **kwargs)
