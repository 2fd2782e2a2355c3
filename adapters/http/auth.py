"""Bearer token check for `/acp`. The token is compared in constant time and never logged.

Browsers cannot set `Authorization` on a WebSocket, so a WebSocket may carry the token in
its subprotocol list instead: `["acp", "iac-code.bearer.<base64url of the UTF-8 token, no
padding>"]`. The server then selects `acp`, never the token's entry (it is not echoed)."""

import base64
import binascii
import re
import secrets
from collections.abc import Callable, Iterable

from starlette.requests import Request

from adapters.http.errors import HttpError

UNAUTHORIZED = "missing or wrong bearer token (Authorization: Bearer <token>)"
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="iac-code"'}
ACP_SUBPROTOCOL = "acp"
BEARER_SUBPROTOCOL_PREFIX = "iac-code.bearer."
BASE64URL_NOPAD = re.compile(r"[A-Za-z0-9_-]*")


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


def socket_token_accepted(
    token: str | None, authorization: str | None, subprotocols: Iterable[str]
) -> bool:
    """True when no token is required, or the handshake carries it: in `Authorization`
    (editors, SDK clients) or as the `iac-code.bearer.` subprotocol (browsers)."""
    if not token or token_accepted(token, authorization):
        return True
    return any(
        secrets.compare_digest(offered, token.encode())
        for offered in map(subprotocol_token, subprotocols)
        if offered is not None
    )


def subprotocol_token(subprotocol: str) -> bytes | None:
    """The token bytes an `iac-code.bearer.<base64url>` subprotocol carries; None for any
    other entry or one that does not decode."""
    if not subprotocol.startswith(BEARER_SUBPROTOCOL_PREFIX):
        return None
    encoded = subprotocol.removeprefix(BEARER_SUBPROTOCOL_PREFIX)
    if not BASE64URL_NOPAD.fullmatch(encoded):
        return None
    try:
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):  # a length no encoding gives (4n + 1)
        return None


def chosen_subprotocol(subprotocols: Iterable[str]) -> str | None:
    """`acp` when the client offered it (a browser fails a handshake whose answer names no
    protocol it offered, or one it did not offer); else none."""
    return ACP_SUBPROTOCOL if ACP_SUBPROTOCOL in subprotocols else None
