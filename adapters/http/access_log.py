"""One structured (JSON) line per request on the `access` logger, written when it ends.

Only what is safe to keep: never a header value other than the connection id (the bearer
token in particular is never read here)."""

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("iac_code.http.access")

CONNECTION_HEADER = b"acp-connection-id"


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        entry: dict[str, Any] = {
            "method": scope["method"],
            "path": scope["path"],
            "status": 500,  # unless the app answers
            "connection": _header(scope["headers"], CONNECTION_HEADER),
        }

        async def observe(message: Message) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
                entry["connection"] = (
                    _header(message.get("headers", ()), CONNECTION_HEADER) or entry["connection"]
                )
            await send(message)

        try:
            await self._app(scope, receive, observe)
        finally:
            entry["ms"] = round((time.perf_counter() - started) * 1000, 1)
            entry["client"] = (scope.get("client") or ("-",))[0]
            entry["rpc"] = scope.get("state", {}).get("rpc")
            log.info("%s", json.dumps({"event": "http", **entry}))


def _header(headers: Any, name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return str(value.decode("latin-1"))[:80]  # a replica id, a dot and a UUID fit
    return None
