"""`GET /` and `/assets/*`: the browser client (adapters/http/web_client, its committed
build in `dist/`). The page holds no data, so it is served without the bearer token; it
signs in on the WebSocket it opens to `/acp` (auth.py).

`index.html` is revalidated on every load (`no-cache`); assets carry a hash of their
content in their names, so they are cached for a year and never revalidated. The page's
Content-Security-Policy allows scripts and styles from this server only (none inline),
connections to this server (its WebSocket included), and images from this server, `data:`
URLs, and `https:` (a remote image in a model's reply loads only when the reader clicks it:
the page replaces it with a button)."""

import re
from pathlib import Path

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

DIST = Path(__file__).resolve().parent / "web_client" / "dist"
ASSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# A Host header is put into the policy only when it is a plain host[:port].
PLAIN_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
}
COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
NOT_BUILT = "the web client is not built: run `npm ci && npm run build` in adapters/http/web_client"


def web_page_router(dist: Path = DIST) -> APIRouter:
    router = APIRouter()

    @router.get("/")
    async def index(request: Request) -> Response:
        page = dist / "index.html"
        if not page.is_file():
            return JSONResponse({"error": NOT_BUILT}, status_code=404)
        headers = {
            **COMMON_HEADERS,
            "Cache-Control": "no-cache",
            "Content-Security-Policy": content_security_policy(request.headers.get("host")),
            "X-Frame-Options": "DENY",
        }
        return FileResponse(page, media_type="text/html; charset=utf-8", headers=headers)

    @router.get("/assets/{name}")
    async def asset(name: str) -> Response:
        path = dist / "assets" / name
        media_type = ASSET_TYPES.get(path.suffix)
        if not ASSET_NAME.fullmatch(name) or media_type is None or not path.is_file():
            return JSONResponse({"error": f"no asset named {name[:80]!r}"}, status_code=404)
        headers = {**COMMON_HEADERS, "Cache-Control": "public, max-age=31536000, immutable"}
        return FileResponse(path, media_type=media_type, headers=headers)

    return router


def content_security_policy(host: str | None) -> str:
    sockets = f" ws://{host} wss://{host}" if host and PLAIN_HOST.fullmatch(host) else ""
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data: https:",
            f"connect-src 'self'{sockets}",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )
