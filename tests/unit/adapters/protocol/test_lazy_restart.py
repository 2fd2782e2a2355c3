"""An agent that could not start because its session store failed is told as that store's
error, and started again at the next request (issue 25, finding 8)."""

import asyncio
from typing import Any, cast

import pytest

from adapters.acp_v1.handshake import initialize_answer
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from adapters.protocol.lazy import LazyDispatcher
from application.errors import StorageError
from application.handshake.initialize import Initialize

PEER = cast(Connection, None)
FACTS = cast(Initialize, None)


class Agent(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        return {"from": "agent"}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


def _failed(exc: BaseException) -> "asyncio.Future[Dispatcher]":
    future: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    future.set_exception(exc)
    return future


def _store_down() -> StorageError:
    return StorageError("The session store could not be opened.", reason="unreachable")


async def test_finding_8_the_store_failing_at_start_is_its_error_until_it_answers() -> None:
    attempts: list[asyncio.Future[Dispatcher]] = [_failed(_store_down())]

    def restart() -> "asyncio.Future[Dispatcher]":
        attempts.append(_failed(_store_down()) if len(attempts) < 2 else _ready())
        return attempts[-1]

    def _ready() -> "asyncio.Future[Dispatcher]":
        future: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
        future.set_result(Agent())
        return future

    lazy = LazyDispatcher(initialize_answer(FACTS), attempts[0], restart=restart)
    with pytest.raises(RpcError) as refused:
        await lazy.handle_request("session/new", {}, PEER)
    assert (refused.value.code, refused.value.data) == (-32603, {"reason": "unreachable"})
    assert "session store" in refused.value.message
    assert await lazy.handle_request("session/new", {}, PEER) == {"from": "agent"}
    assert len(attempts) == 3  # tried again at each request, until it started


async def test_an_agent_failing_otherwise_is_not_started_again() -> None:
    restarted: list[bool] = []

    def restart() -> "asyncio.Future[Dispatcher]":
        restarted.append(True)
        return _failed(RuntimeError("a bug"))

    lazy = LazyDispatcher(initialize_answer(FACTS), _failed(RuntimeError("a bug")), restart=restart)
    with pytest.raises(RuntimeError):
        await lazy.handle_request("session/new", {}, PEER)
    assert restarted == []
