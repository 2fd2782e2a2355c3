"""`/acp`: POST a JSON-RPC message, GET the event stream, DELETE the connection."""

import asyncio
from typing import Any

from fastapi import APIRouter, Depends
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters.http.auth import bearer_guard
from adapters.http.config import HttpConfig
from adapters.http.errors import HttpError
from adapters.http.event_ids import EventId, parse_event_id
from adapters.http.frames import retry_frame
from adapters.http.intake import check_content_type, decode, is_initialize, read_body
from adapters.http.outbox import LastEventIdAhead
from adapters.http.registry import ConnectionRegistry
from adapters.protocol.jsonrpc import encode

CONNECTION_ID = "Acp-Connection-Id"
SESSION_ID = "Acp-Session-Id"
# On shutdown a stream gets this long to finish cleanly (uvicorn waits 5 s for all of them).
SHUTDOWN_GRACE_SECONDS = 3.0


def acp_router(registry: ConnectionRegistry, config: HttpConfig) -> APIRouter:
    router = APIRouter(dependencies=[Depends(bearer_guard(config.token))])

    @router.post("/acp")
    async def post(request: Request) -> Response:
        check_content_type(request.headers.get("content-type"))
        body = await read_body(request, config.max_body_bytes, config.body_timeout_seconds)
        message = decode(body)
        method = message.get("method")
        request.state.rpc = "response" if method is None else str(method)[:80]
        if is_initialize(message):
            return await _initialize(registry, config, body, message["id"])
        connection = await registry.find(request.headers.get(CONNECTION_ID), None)
        await connection.receive(body)
        return Response(status_code=202)

    @router.get("/acp")
    async def stream(request: Request) -> EventSourceResponse:
        event_id = _last_event_id(request.headers.get("last-event-id"))
        connection = await registry.find(request.headers.get(CONNECTION_ID), event_id)
        session_id = request.headers.get(SESSION_ID)
        if session_id is not None:
            if session_id not in connection.sessions:
                raise HttpError(404, f"unknown session id {session_id[:64]} on this connection")
            first = retry_frame(
                config.retry_ms, "session stream: its events arrive on the connection stream"
            )
            frames = connection.session_stream(first)
            request.state.rpc = "stream:session"
        else:
            last_event_id = None if event_id is None else event_id.number
            request.state.rpc = (
                "stream" if last_event_id is None else f"stream:after={last_event_id}"
            )
            try:
                frames = connection.follow(last_event_id, retry_frame(config.retry_ms, "stream"))
            except LastEventIdAhead as exc:
                raise HttpError(400, str(exc)) from None
        return EventSourceResponse(
            frames,
            headers={CONNECTION_ID: connection.id, "Cache-Control": "no-cache"},
            ping=config.keepalive_seconds,
            ping_message_factory=_keepalive,
            sep="\n",
            shutdown_event=registry.stopping,
            shutdown_grace_period=SHUTDOWN_GRACE_SECONDS,
        )

    @router.delete("/acp")
    async def delete(request: Request) -> JSONResponse:
        connection = registry.get(request.headers.get(CONNECTION_ID))
        await registry.close(connection, "deleted by the client")
        return JSONResponse({"closed": connection.id})

    return router


async def _initialize(
    registry: ConnectionRegistry, config: HttpConfig, body: bytes, request_id: Any
) -> Response:
    connection = registry.open()
    try:
        reply = await asyncio.wait_for(
            connection.initialize(body, request_id), config.initialize_timeout_seconds
        )
    except TimeoutError:
        await registry.close(connection, "initialize was not answered in time", grace=0)
        raise HttpError(
            504,
            f"the agent did not answer initialize within {config.initialize_timeout_seconds:g} s",
        ) from None
    if "error" in reply:
        # Nothing to continue: the failed connection gives its slot back at once.
        await registry.close(connection, "initialize failed", grace=0)
        return Response(encode(reply), media_type="application/json")
    return Response(
        encode(reply), media_type="application/json", headers={CONNECTION_ID: connection.id}
    )


def _last_event_id(header: str | None) -> EventId | None:
    if header is None or not header.strip():
        return None
    # ASCII digits only (event_ids.py): str.isdigit() also takes "²" (a \xb2 byte read as
    # latin-1), and int() refuses that, or thousands of digits.
    event_id = parse_event_id(header.strip())
    if event_id is None:
        raise HttpError(400, "Last-Event-ID must be the id of an event this server sent")
    return event_id


def _keepalive() -> ServerSentEvent:
    return ServerSentEvent(comment="keepalive", sep="\n")
