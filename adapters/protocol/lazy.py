"""A dispatcher that answers `initialize` at once and hands everything else to the full
protocol agent as soon as it has loaded (in the background, right after start). Until
then, `early` answers may serve some requests from light modules; one that returns None
leaves its request to the agent. An agent that could not start because its session store
failed (a StorageError) is told as that store's error, and, given `restart`, started again
at the next request (the database may answer by then). `when_idle` runs work that may wait
(e.g. warming the model SDK) once no request is being served, so none waits for it."""

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.errors import to_rpc_error
from adapters.protocol.handshake import handle_initialize
from application.errors import ApplicationError, StorageError
from application.use_cases.initialize import Initialize

EarlyAnswer = Callable[[dict[str, Any] | None], Awaitable[Any | None]]


class LazyDispatcher(Dispatcher):
    def __init__(
        self,
        initialize: Initialize,
        agent: "asyncio.Future[Dispatcher]",
        early: Mapping[str, EarlyAnswer] | None = None,
        restart: "Callable[[], asyncio.Future[Dispatcher]] | None" = None,
    ) -> None:
        self._initialize = initialize
        self._agent = agent
        self._early = early or {}
        self._restart = restart
        self._serving = 0  # requests accepted and not yet answered
        self._when_idle: list[Callable[[], None]] = []

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        """Once loaded, the agent accepts the request itself (it registers prompts as read)."""
        if method != "initialize" and self._loaded():
            work = self._agent.result().accept(method, params, peer)
        else:
            work = self.handle_request(method, params, peer)
        self._serving += 1
        return self._counted(work)

    async def _counted(self, work: Awaitable[Any]) -> Any:
        try:
            return await work
        finally:
            self._serving -= 1
            if not self._serving:
                self._run_idle_work()

    def when_idle(self, work: Callable[[], None]) -> None:
        """Run `work` (on the loop's thread, once) as soon as no request is being served:
        now, if none is."""
        self._when_idle.append(work)
        if not self._serving:
            self._run_idle_work()

    def _run_idle_work(self) -> None:
        waiting, self._when_idle = self._when_idle, []
        for work in waiting:
            work()

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: Connection) -> bool:
        return self._loaded() and self._agent.result().withdraw(method, params, peer)

    def _loaded(self) -> bool:
        return self._agent.done() and not self._agent.cancelled() and not self._agent.exception()

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        if method == "initialize":
            return handle_initialize(self._initialize, params, peer)
        early = self._early.get(method)
        if early is not None and not self._agent.done():
            answer = await early(params)
            if answer is not None:
                return answer
        agent = await self._started()
        return await agent.handle_request(method, params, peer)

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        agent = await self._started()
        await agent.handle_notification(method, params, peer)

    async def _started(self) -> Dispatcher:
        failed = self._agent.done() and not self._agent.cancelled() and self._agent.exception()
        if isinstance(failed, StorageError) and self._restart is not None:
            self._agent = self._restart()  # requests meanwhile wait for this attempt
        try:
            return await asyncio.shield(self._agent)
        except ApplicationError as exc:
            raise to_rpc_error(exc) from None

    async def peer_closed(self, peer: Connection) -> None:
        if self._loaded():
            await self._agent.result().peer_closed(peer)
