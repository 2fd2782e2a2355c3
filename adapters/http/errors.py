"""The transport's HTTP errors, answered as `{"error": "..."}` or, for a message that is not
a JSON-RPC object, with the JSON-RPC error response itself."""

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse


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


async def answer_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HttpError)
    return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)
