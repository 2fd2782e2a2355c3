"""Bearer token check for `/acp`. The token is compared in constant time and never logged."""

import secrets
from collections.abc import Callable

from starlette.requests import Request

from adapters.http.errors import HttpError


def bearer_guard(token: str | None) -> Callable[[Request], None]:
    expected = token.encode() if token else None

    def require_token(request: Request) -> None:
        if expected is None:
            return
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        given = value.strip().encode()
        if not (scheme.lower() == "bearer" and secrets.compare_digest(given, expected)):
            raise HttpError(
                401,
                "missing or wrong bearer token (Authorization: Bearer <token>)",
                headers={"WWW-Authenticate": 'Bearer realm="iac-code"'},
            )

    return require_token
