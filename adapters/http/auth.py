"""Bearer token check for `/acp`. The token is compared in constant time and never logged."""

import secrets
from collections.abc import Callable

from starlette.requests import Request

from adapters.http.errors import HttpError

UNAUTHORIZED = "missing or wrong bearer token (Authorization: Bearer <token>)"
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="iac-code"'}


def bearer_guard(token: str | None) -> Callable[[Request], None]:
    def require_token(request: Request) -> None:
        if not token_accepted(token, request.headers.get("authorization")):
            raise HttpError(401, UNAUTHORIZED, headers=CHALLENGE)

    return require_token


def token_accepted(token: str | None, authorization: str | None) -> bool:
    """True when no token is required, or `authorization` is `Bearer <token>`."""
    if not token:
        return True
    scheme, _, value = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(
        value.strip().encode(), token.encode()
    )
