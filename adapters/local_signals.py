"""Cluster signals within one process (SQLite, or tests): every subscriber of a channel is
called for each payload published on it. There is nothing to lose, so never a resync."""

import asyncio
from collections.abc import Callable

from application.ports.cluster_signals import ClusterSignals, Unsubscribe

_Handlers = dict[str, list[Callable[[str], None]]]


class LocalSignals(ClusterSignals):
    def __init__(self) -> None:
        self._handlers: _Handlers = {}

    async def publish(self, channel: str, payload: str) -> None:
        loop = asyncio.get_running_loop()
        for handler in list(self._handlers.get(channel, ())):
            loop.call_soon(handler, payload)  # like a notification: never inside the publisher

    async def subscribe(
        self,
        channel: str,
        on_message: Callable[[str], None],
        on_resync: Callable[[], None],
    ) -> Unsubscribe:
        self._handlers.setdefault(channel, []).append(on_message)

        async def unsubscribe() -> None:
            handlers = self._handlers.get(channel, [])
            if on_message in handlers:
                handlers.remove(on_message)

        return unsubscribe

    async def close(self) -> None:
        self._handlers.clear()
