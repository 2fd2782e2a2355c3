"""The official ACP client (`acp.ws`) on a server's WebSocket, initialized: how the tests
that drive a server as an editor over the WebSocket open it."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from acp import PROTOCOL_VERSION, Client, connect_to_agent
from acp.connection import StreamEvent
from acp.schema import ClientCapabilities, Implementation
from acp.ws import create_websocket_stream


def ws_url(base: str) -> str:
    """The WebSocket endpoint of a server at `base` (http://host:port)."""
    return base.replace("http://", "ws://") + "/acp"


@asynccontextmanager
async def official_on_websocket(
    url: str,
    client: Client,
    *,
    name: str,
    headers: dict[str, str] | None = None,
    observe: Callable[[StreamEvent], None] | None = None,
    server_may_be_gone: bool = False,
) -> AsyncIterator[tuple[Any, Any]]:
    """Connected and initialized as `name`; yields the connection and the `initialize`
    answer. `server_may_be_gone`: closing is not checked (a test that stopped the server)."""
    transport = await create_websocket_stream(url, headers=headers)
    conn = connect_to_agent(client, transport, observers=[observe] if observe else [])
    try:
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name=name, version="1"),
        )
        yield conn, init
    finally:
        try:
            await conn.close()
            await transport.close()
        except Exception:
            if not server_may_be_gone:
                raise
