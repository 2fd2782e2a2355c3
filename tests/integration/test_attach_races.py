"""Races between a connection going away and the calls it still has in flight: whatever
those calls attach once the connection has detached must not stay attached, or the session
keeps a dead peer forever (never closed when idle, no detached clock, others refused)."""

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.agent import AcpAgent
from adapters.protocol.connection import Connection
from application.use_cases.load_session import LoadSessionRequest
from bootstrap.container import Container
from bootstrap.settings import Settings
from tests.integration.test_agent_connections import Peer

pytestmark = pytest.mark.integration


@pytest.fixture
async def container(tmp_path: Path) -> AsyncIterator[Container]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    upgrade_to_head(url)
    container = Container(
        settings=Settings(provider="demo", config_dir=tmp_path, database_url=url), version="test"
    )
    yield container
    await container.engine().dispose()


class HeldLoad:
    """A `LoadSession` whose read of the stored session waits for the test."""

    def __init__(self, inner: Any, entered: asyncio.Event, gate: asyncio.Event) -> None:
        self._inner, self._entered, self._gate = inner, entered, gate

    async def prepare(self, request: LoadSessionRequest) -> Any:
        self._entered.set()
        await self._gate.wait()
        return await self._inner.prepare(request)


class HeldAgent(AcpAgent):
    """The real agent, with `session/load` held and `peer_closed` observable."""

    def __init__(self, container: Container) -> None:
        self.entered, self.gate, self.closed = asyncio.Event(), asyncio.Event(), asyncio.Event()
        inner = container.use_cases()
        use_cases = dataclasses.replace(
            inner, load_session=lambda: HeldLoad(inner.load_session(), self.entered, self.gate)
        )
        super().__init__(use_cases, container.channels())

    async def peer_closed(self, peer: Connection) -> None:
        await super().peer_closed(peer)
        self.closed.set()


async def test_a_load_finishing_after_its_connection_closed_leaves_nothing_attached(
    container: Container, tmp_path: Path
) -> None:
    cwd = tmp_path
    agent = HeldAgent(container)
    a, b = Peer(agent), Peer(agent)
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await b.start("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    await asyncio.wait_for(agent.entered.wait(), 5)
    closing = asyncio.ensure_future(b.connection.close())  # b goes away mid-load
    await asyncio.wait_for(agent.closed.wait(), 5)
    agent.gate.set()  # the load goes on and attaches b
    await asyncio.wait_for(closing, 5)
    channels = container.channels()
    assert channels.ownership.peers_of(sid) == [a.connection]
    # So when a leaves too, nobody is attached and the idle session is closed.
    await a.connection.close()
    assert channels.ownership.peers_of(sid) == []
    assert container.registry().find(sid) is None
