"""Refuses requests for other host names, and requests from other web pages.

A web page that rebinds its own DNS name to 127.0.0.1 reaches a loopback server, but its
requests still name the page's host. A page on any host can make a browser send requests
(and open WebSockets) to any server, but the browser then names the page in `Origin`:
only the server's own origin, and those listed in IAC_CODE_HTTP_ALLOWED_ORIGINS, are
served. `Origin: null` (sandboxed iframes, local files) names no page at all: refused.
Requests without an Origin (curl, SDK clients, editors: not browsers) are served."""

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}
# The scheme a page of this server would have, by the scheme of the request reaching it.
PAGE_SCHEMES = {"http": "http", "ws": "http", "https": "https", "wss": "https"}
ORIGINS_SETTING = "IAC_CODE_HTTP_ALLOWED_ORIGINS"


def hostname(value: str) -> str:
    """The name in a Host header, an Origin or a setting, without port or brackets.
    Malformed values give "" (never allowed)."""
    try:
        netloc = urlsplit(value).netloc if "://" in value else value
        return (urlsplit(f"//{netloc}").hostname or "").lower()
    except ValueError:
        return ""


def normal_origin(value: str) -> str | None:
    """`scheme://host:port` (lower case, the default port written out) of an origin such as
    a browser sends, `http://localhost:3000` or `https://app.example`; None for anything
    else (`null`, a path, another scheme, a bad port)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    if parts.path or parts.query or parts.fragment or value.strip().endswith(("?", "#")):
        return None
    return _origin(scheme, parts.hostname, port)


def own_origin(scheme: str, host: str) -> str | None:
    """The origin of a page this server would serve, from the request's scheme and Host
    header (what the client addressed: behind a proxy, the proxy's name and port)."""
    page_scheme = PAGE_SCHEMES.get(scheme)
    try:
        parts = urlsplit(f"//{host}")
        port = parts.port
    except ValueError:
        return None
    if page_scheme is None or not parts.hostname:
        return None
    return _origin(page_scheme, parts.hostname, port)


def _origin(scheme: str, name: str, port: int | None) -> str:
    name = name.lower()
    host = f"[{name}]" if ":" in name else name
    return f"{scheme}://{host}:{port if port is not None else DEFAULT_PORTS[scheme]}"


class HostGuard:
    """Pure ASGI middleware. `allowed` None accepts any Host. An Origin header must be the
    server's own (scheme, host and port of the Host it was sent to) or one of
    `allowed_origins` (normalised by `normal_origin`). WebSocket handshakes are checked
    alike: browsers send any page's WebSocket to any host, so Origin is the only thing that
    tells."""

    def __init__(
        self,
        app: ASGIApp,
        allowed: frozenset[str] | None,
        allowed_origins: frozenset[str] = frozenset(),
    ) -> None:
        self._app = app
        self._allowed = allowed
        self._allowed_origins = allowed_origins

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = hostname(headers.get("host", ""))
        if self._allowed is not None and host not in self._allowed:
            await _refuse(scope, send, f"requests for host {host!r} are not served here")
            return
        origin = headers.get("origin")
        if origin is not None:
            own = own_origin(scope.get("scheme", "http"), headers.get("host", ""))
            if not self._origin_accepted(origin, own):
                await _refuse(scope, send, _cross_origin(origin, own))
                return
        await self._app(scope, receive, send)

    def _origin_accepted(self, origin: str, own: str | None) -> bool:
        normal = normal_origin(origin)
        return normal is not None and (normal == own or normal in self._allowed_origins)


def _cross_origin(origin: str, own: str | None) -> str:
    shown = origin[:100]
    if origin.strip() == "null":
        return (
            "cross-origin requests are not served: origin 'null' (a sandboxed or local page) "
            f"names no page; a web client must be served from this server or {ORIGINS_SETTING}"
        )
    return (
        f"cross-origin requests are not served: origin {shown!r} is neither this server's "
        f"own ({own or 'unknown: no valid Host'}) nor listed in {ORIGINS_SETTING}"
    )


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
