"""The transport's HTTP errors. Every error answer is a JSON object with an `error` member:
`{"error": "<what went wrong>"}`, or, for a body that is not one JSON-RPC object, the
JSON-RPC error response itself (its `error` is the JSON-RPC error object)."""

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger(__name__)

ROUTES = "/acp (POST, GET, DELETE), /healthz and /readyz (GET)"


class HttpError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.body = body if body is not None else {"error": message}


class ClientGone(Exception):
    """The client closed its connection before its request had been read: nobody is left to
    answer, and nothing went wrong on the server's side."""


# nginx's status for it: the access log shows the request ended by its client, not a 500.
CLIENT_CLOSED_REQUEST = 499


async def answer_client_gone(request: Request, exc: Exception) -> Response:
    log.info("the client closed its connection during %s %s", request.method, request.url.path)
    return Response(status_code=CLIENT_CLOSED_REQUEST)


async def answer_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HttpError)
    return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)


async def answer_routing_error(request: Request, exc: Exception) -> JSONResponse:
    """The framework's own errors (unknown path, method not allowed) in our shape."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"not found: this server serves {ROUTES}"
    elif exc.status_code == 405:
        message = f"method {request.method[:16]} is not allowed here; this server serves {ROUTES}"
    else:
        message = str(exc.detail)
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)


async def answer_unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A bug: the client learns nothing of it but that it happened (the log has the rest)."""
    return JSONResponse({"error": "internal server error"}, status_code=500)
