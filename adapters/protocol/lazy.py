"""A dispatcher that answers `initialize` at once and hands everything else to the full
protocol agent as soon as it has loaded (in the background, right after start)."""

import asyncio
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.handshake import handle_initialize
from application.use_cases.initialize import Initialize


class LazyDispatcher(Dispatcher):
    def __init__(self, initialize: Initialize, agent: "asyncio.Future[Dispatcher]") -> None:
        self._initialize = initialize
        self._agent = agent

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        if method == "initialize":
            return handle_initialize(self._initialize, params, peer)
        agent = await asyncio.shield(self._agent)
        return await agent.handle_request(method, params, peer)

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        agent = await asyncio.shield(self._agent)
        await agent.handle_notification(method, params, peer)

    async def peer_closed(self, peer: Connection) -> None:
        if self._agent.done() and not self._agent.cancelled() and not self._agent.exception():
            await self._agent.result().peer_closed(peer)
