"""Work that may hold the process up (warming the model SDK) waits until no request is being
served: `LazyDispatcher.when_idle` (issue 34: the warm-up ran while the first load replayed)."""

import asyncio
from typing import Any, cast

from adapters.acp_v1.handshake import initialize_answer
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher
from application.handshake.initialize import Initialize

PEER = cast(Connection, None)
FACTS = cast(Initialize, None)


class SlowAgent(Dispatcher):
    """Answers each request once `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        await self.release.wait()
        return {"method": method}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


def _started(agent: Dispatcher) -> "asyncio.Future[Dispatcher]":
    future: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    future.set_result(agent)
    return future


async def test_work_runs_at_once_when_nothing_is_served() -> None:
    lazy = LazyDispatcher(initialize_answer(FACTS), _started(SlowAgent()))
    ran: list[str] = []
    lazy.when_idle(lambda: ran.append("warm"))
    assert ran == ["warm"]


async def test_work_waits_for_every_request_being_served_and_runs_once() -> None:
    agent = SlowAgent()
    lazy = LazyDispatcher(initialize_answer(FACTS), _started(agent))
    load = asyncio.ensure_future(lazy.accept("session/load", {}, PEER))
    listing = asyncio.ensure_future(lazy.accept("session/list", {}, PEER))
    ran: list[str] = []
    lazy.when_idle(lambda: ran.append("warm"))
    await asyncio.sleep(0)
    assert ran == []
    agent.release.set()
    assert await load == {"method": "session/load"}
    assert await listing == {"method": "session/list"}
    assert ran == ["warm"]
    await lazy.accept("session/new", {}, PEER)
    assert ran == ["warm"]  # once, not again after each later request


async def test_a_request_waiting_for_the_agent_to_load_counts_as_served() -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = LazyDispatcher(initialize_answer(FACTS), loading)
    waiting = asyncio.ensure_future(lazy.accept("session/new", {}, PEER))
    await asyncio.sleep(0)
    ran: list[str] = []
    agent = SlowAgent()
    loading.set_result(agent)
    lazy.when_idle(lambda: ran.append("warm"))
    assert ran == []
    agent.release.set()
    await waiting
    assert ran == ["warm"]


async def test_a_cancelled_request_is_no_longer_served() -> None:
    lazy = LazyDispatcher(initialize_answer(FACTS), _started(SlowAgent()))
    serving = asyncio.ensure_future(lazy.accept("session/prompt", {}, PEER))
    await asyncio.sleep(0)
    ran: list[str] = []
    lazy.when_idle(lambda: ran.append("warm"))
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)
    assert ran == ["warm"]
