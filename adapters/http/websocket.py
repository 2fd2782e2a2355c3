"""`GET /acp` with `Upgrade: websocket`: the whole protocol on one socket, one JSON-RPC
message per text frame in each direction.

Refused before the upgrade, with an HTTP answer in the transport's error shape: 401 for a
missing or wrong bearer token (in `Authorization`, or for browsers in the subprotocol list:
auth.py), 403 for another Host or Origin (host_guard.py), 503 when the
connection cap (shared with HTTP connections) is reached. Once open, the socket is closed
with (see docs/protocol.md): 1000 when the client closes it, 1001 when the server stops,
1003 for a binary frame, 1007 for text that is not UTF-8, 1008 for a client too far behind
(socket_connection.py) or one that sends nothing after opening, 1009 for a frame over
IAC_CODE_HTTP_MAX_BODY_BYTES, 1011 for a client that stopped answering pings. Text that is
not a JSON-RPC message is answered with a JSON-RPC error, and the socket goes on serving.
"""

import asyncio
import logging

from fastapi import APIRouter
from starlette.responses import JSONResponse
from starlette.types import Message
from starlette.websockets import WebSocket

from adapters.http.auth import (
    CHALLENGE,
    UNAUTHORIZED,
    chosen_subprotocol,
    socket_token_accepted,
)
from adapters.http.config import HttpConfig
from adapters.http.errors import HttpError
from adapters.http.registry import ConnectionRegistry
from adapters.http.socket_connection import Fail, SocketConnection
from adapters.http.websocket_protocol import ABORT
from adapters.protocol.connection import Dispatcher

log = logging.getLogger(__name__)

CONNECTION_ID = "Acp-Connection-Id"
UNSUPPORTED_DATA = 1003
BINARY_REASON = "binary frames are not accepted: send each JSON-RPC message as a text frame"
POLICY_VIOLATION = 1008
# Like an HTTP connection never used after `initialize`: a socket that says nothing would
# hold a slot of the connection cap for as long as it answers pings.
UNUSED_REASON = "nothing sent within {:g} s of opening (IAC_CODE_HTTP_UNUSED_TIMEOUT_SECONDS)"


def websocket_router(
    registry: ConnectionRegistry, dispatcher: Dispatcher, config: HttpConfig
) -> APIRouter:
    router = APIRouter()

    @router.websocket("/acp")
    async def socket(websocket: WebSocket) -> None:
        offered = websocket.scope.get("subprotocols", [])
        if not socket_token_accepted(config.token, websocket.headers.get("authorization"), offered):
            await _deny(websocket, HttpError(401, UNAUTHORIZED, headers=CHALLENGE))
            return
        try:
            connection_id = registry.open_socket()
        except HttpError as refusal:
            await _deny(websocket, refusal)
            return
        try:
            await _serve(websocket, connection_id, dispatcher, config)
        finally:
            registry.close_socket()

    return router


async def _serve(
    websocket: WebSocket, connection_id: str, dispatcher: Dispatcher, config: HttpConfig
) -> None:
    await websocket.accept(
        subprotocol=chosen_subprotocol(websocket.scope.get("subprotocols", [])),
        headers=[(CONNECTION_ID.lower().encode(), connection_id.encode())],
    )
    fail = _failer(websocket)
    connection = SocketConnection(connection_id, dispatcher, config, websocket.send_text, fail)
    log.info("websocket connection %s opened", connection_id)
    why = "sent nothing after opening"
    try:
        try:
            async with asyncio.timeout(config.unused_timeout_seconds):
                message = await websocket.receive()
        except TimeoutError:
            fail(POLICY_VIOLATION, UNUSED_REASON.format(config.unused_timeout_seconds))
            return
        while (stop := await _take(message, connection, fail)) is None:
            message = await websocket.receive()
        why = stop
    finally:
        log.info("websocket connection %s %s", connection_id, why)
        await connection.close()


async def _take(message: Message, connection: SocketConnection, fail: Fail) -> str | None:
    """Hand a text frame to the connection; or why the socket is done."""
    if message["type"] == "websocket.disconnect":
        return f"disconnected ({message.get('code')} {message.get('reason') or ''})".strip()
    text = message.get("text")
    if text is None:
        fail(UNSUPPORTED_DATA, BINARY_REASON)
        return "sent a binary frame"
    await connection.receive(text)
    return None


def _failer(websocket: WebSocket) -> Fail:
    """Close the socket now with a code: through the server's abort where it has one
    (websocket_protocol.py), which does not wait for a slow reader; else by a close, which
    may wait for one."""
    abort: Fail | None = websocket.scope.get("extensions", {}).get(ABORT, {}).get("abort")
    if abort is not None:
        return abort
    closing: set[asyncio.Task[None]] = set()

    def close_soon(code: int, reason: str) -> None:
        task = asyncio.get_running_loop().create_task(websocket.close(code, reason))
        closing.add(task)
        task.add_done_callback(closing.discard)

    return close_soon


async def _deny(websocket: WebSocket, refusal: HttpError) -> None:
    """Refuse the handshake with an HTTP answer where the server can send one (uvicorn
    does), else with a close before accepting (a plain 403)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        response = JSONResponse(refusal.body, status_code=refusal.status, headers=refusal.headers)
        await websocket.send_denial_response(response)
    else:
        await websocket.close(1008, refusal.message[:120])
