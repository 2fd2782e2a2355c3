"""Refuses requests for other host names: a web page that rebinds its own DNS name to
127.0.0.1 reaches a loopback server, but its requests still name the page's host."""

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def hostname(value: str) -> str:
    """The name in a Host header, an Origin or a setting, without port or brackets.
    Malformed values give "" (never allowed)."""
    try:
        netloc = urlsplit(value).netloc if "://" in value else value
        return (urlsplit(f"//{netloc}").hostname or "").lower()
    except ValueError:
        return ""


class HostGuard:
    """Pure ASGI middleware. `allowed` None accepts any Host; an Origin header must then at
    least match the Host it was sent to. WebSocket handshakes are checked alike: browsers
    send any page's WebSocket to any host, so Origin is the only thing that tells."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str] | None) -> None:
        self._app = app
        self._allowed = allowed

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = hostname(headers.get("host", ""))
        origin = headers.get("origin")
        if self._allowed is not None and host not in self._allowed:
            await _refuse(scope, send, f"requests for host {host!r} are not served here")
            return
        if origin and origin != "null":
            accepted = self._allowed if self._allowed is not None else {host}
            if hostname(origin) not in accepted:
                await _refuse(scope, send, "cross-origin requests are not served")
                return
        await self._app(scope, receive, send)


async def _refuse(scope: Scope, send: Any, reason: str) -> None:
    """403 with the reason. A WebSocket handshake gets the same answer where the server
    can send one (ASGI's denial response), else a plain 403 (closed before accepting)."""
    prefix = ""
    if scope["type"] == "websocket":
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})
            return
        prefix = "websocket."
    body = json.dumps({"error": reason}).encode()
    await send(
        {
            "type": f"{prefix}http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": f"{prefix}http.response.body", "body": body})
