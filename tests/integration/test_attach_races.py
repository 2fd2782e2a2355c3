"""Races between a connection going away and the calls it still has in flight: whatever
those calls attach once the connection has detached must not stay attached, or the session
keeps a dead peer forever (never closed when idle, no detached clock, others refused)."""

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from adapters.acp_v1.agent import AcpAgent
from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.connection import Connection
from application.sessions.load_session import LoadSessionRequest
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from tests.integration.test_agent_connections import (
    GatedLLM,
    ManualTimers,
    Peer,
    prompt,
    timed_agent,
)
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration


@pytest.fixture
async def container(tmp_path: Path) -> AsyncIterator[Container]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    upgrade_to_head(url)
    container = Container(
        settings=Settings(provider="demo", config_dir=tmp_path, database_url=url), version="test"
    )
    yield container
    await release(container)


class HeldLoad:
    """A `LoadSession` whose read of the stored session waits for the test."""

    def __init__(self, inner: Any, entered: asyncio.Event, gate: asyncio.Event) -> None:
        self._inner, self._entered, self._gate = inner, entered, gate

    async def prepare(self, request: LoadSessionRequest) -> Any:
        loaded = await self._inner.prepare(request)
        self._entered.set()
        await self._gate.wait()
        return loaded


class HeldAgent(AcpAgent):
    """The real agent, with `session/load` held and `peer_closed` observable."""

    def __init__(self, container: Container, schedule: Any = None) -> None:
        self.entered, self.gate, self.closed = asyncio.Event(), asyncio.Event(), asyncio.Event()
        inner = container.use_cases()
        use_cases = dataclasses.replace(
            inner, load_session=lambda: HeldLoad(inner.load_session(), self.entered, self.gate)
        )
        timing: dict[str, Any] = {"schedule": schedule} if schedule is not None else {}
        container.room.add_kwargs(detached_timeout=42.0, **timing)
        super().__init__(use_cases, container.room(), container.channels())

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
    await asyncio.wait_for(agent.entered.wait(), PATIENCE)
    closing = asyncio.ensure_future(b.connection.close())  # b goes away mid-load
    await asyncio.wait_for(agent.closed.wait(), PATIENCE)
    agent.gate.set()  # the load goes on and attaches b
    await asyncio.wait_for(closing, PATIENCE)
    room = container.room()
    assert room.peers_of(sid) == [a.connection]
    # So when a leaves too, nobody is attached and the idle session is closed.
    await a.connection.close()
    assert room.peers_of(sid) == []
    assert container.registry().find(sid) is None


async def test_a_prompt_on_a_session_left_alone_is_not_cancelled_by_the_old_clock(
    tmp_path: Path,
) -> None:
    """a drops mid-turn (the detached clock starts); the turn ends; c, not attached, prompts
    the session (free for anyone while nobody is attached). The clock was for a's turn: it
    must not cancel c's, which c is waiting for."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    upgrade_to_head(url)
    settings = Settings(provider="demo", config_dir=tmp_path, database_url=url)
    container = Container(settings=settings, version="test")
    llm = GatedLLM()
    container.llm.override(providers.Object(llm))
    timers = ManualTimers()
    agent = timed_agent(container, timers)
    a, c = Peer(agent), Peer(agent)
    cwd = str(tmp_path)
    sid = (await a.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
    await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    turn = container.registry().find(sid).turn
    await a.connection.close()
    assert timers.live() == [42.0]
    llm.gate.set()
    await asyncio.wait_for(turn.finished.wait(), PATIENCE)
    llm.gate.clear()
    llm.streaming.clear()
    second = await c.start("session/prompt", prompt(sid, "my turn"))
    await asyncio.wait_for(llm.streaming.wait(), PATIENCE)
    timers.fire()  # a's deadline passes while c's turn runs
    await asyncio.gather(*container.room()._detached._tasks)  # what the deadline does, done
    llm.gate.set()
    answer = await asyncio.wait_for(second, PATIENCE)
    assert answer["result"]["stopReason"] == "end_turn"
    # c adopted the session: it saw its turn, and controls the session now.
    assert [
        u["content"]["text"] for u in c.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["working ", "done"]
    assert container.room().controller_of(sid) is c.connection
    await c.connection.close()
    assert container.registry().find(sid) is None  # c gone, idle: closed as usual
    await release(container)


async def test_a_load_under_way_when_the_detached_deadline_passes_gets_a_usable_session(
    tmp_path: Path,
) -> None:
    """a drops mid-turn; b's `session/load` has read the session when a's deadline passes
    (the turn is cancelled, the session closed). b's load then succeeds: the session it was
    told is loaded must be usable, not closed under it."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    upgrade_to_head(url)
    settings = Settings(provider="demo", config_dir=tmp_path, database_url=url)
    container = Container(settings=settings, version="test")
    llm = GatedLLM()
    container.llm.override(providers.Object(llm))
    timers = ManualTimers()
    agent = HeldAgent(container, timers)
    a, b = Peer(agent), Peer(agent)
    cwd = str(tmp_path)
    sid = (await a.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
    await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    turn = container.registry().find(sid).turn
    await a.connection.close()
    loading = await b.start("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
    await asyncio.wait_for(agent.entered.wait(), PATIENCE)
    timers.fire()
    await asyncio.gather(*container.room()._detached._tasks)  # the deadline's close, done
    agent.gate.set()
    loaded = await asyncio.wait_for(loading, PATIENCE)
    assert loaded["result"]["_meta"]["iac_code"]["role"] == "controller"
    llm.gate.set()
    await asyncio.wait_for(turn.finished.wait(), PATIENCE)
    answer = await b.call("session/prompt", prompt(sid, "still there?"))
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    await b.connection.close()
    await release(container)


async def test_a_load_under_way_when_the_last_client_leaves_gets_a_usable_session(
    container: Container, tmp_path: Path
) -> None:
    """a, the only client, leaves its idle session (closed at once: nobody attached) while
    b's `session/load` of it is under way. b is then told the session is loaded: it must be
    open for b's prompt, not closed under it."""
    agent = HeldAgent(container)
    a, b = Peer(agent), Peer(agent)
    cwd = str(tmp_path)
    sid = (await a.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
    loading = await b.start("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
    await asyncio.wait_for(agent.entered.wait(), PATIENCE)
    await a.connection.close()
    agent.gate.set()
    loaded = await asyncio.wait_for(loading, PATIENCE)
    assert loaded["result"]["_meta"]["iac_code"]["role"] == "controller"
    answer = await b.call("session/prompt", prompt(sid, "/help"))
    assert "result" in answer, answer
    await b.connection.close()
    assert container.registry().find(sid) is None  # and closed when b leaves in turn


async def test_a_load_under_way_when_the_last_client_closes_the_session_gets_it_open(
    container: Container, tmp_path: Path
) -> None:
    """The same with an explicit `session/close` from a, the last attached client."""
    agent = HeldAgent(container)
    a, b = Peer(agent), Peer(agent)
    cwd = str(tmp_path)
    sid = (await a.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
    loading = await b.start("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
    await asyncio.wait_for(agent.entered.wait(), PATIENCE)
    assert (await a.call("session/close", {"sessionId": sid}))["result"] == {}
    agent.gate.set()
    assert "result" in await asyncio.wait_for(loading, PATIENCE)
    answer = await b.call("session/prompt", prompt(sid, "/help"))
    assert "result" in answer, answer
    assert (await b.call("session/close", {"sessionId": sid}))["result"] == {}
    assert container.registry().find(sid) is None  # b was the last: closed now
    await a.connection.close()
    await b.connection.close()


class KeyLLM(GatedLLM):
    """A model whose key the test can take away."""

    keyed = True

    def has_credentials(self) -> bool:
        return self.keyed


async def test_a_prompt_refused_for_want_of_a_key_leaves_the_controller_as_it_was(
    container: Container, tmp_path: Path
) -> None:
    """Only an accepted prompt makes its sender the controller (docs/protocol.md, Roles)."""
    llm = KeyLLM()
    container.llm.override(providers.Object(llm))
    agent = container.agent()
    a, b = Peer(agent), Peer(agent)
    cwd = str(tmp_path)
    sid = (await a.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
    await b.call("session/resume", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
    llm.keyed = False
    refused = await b.call("session/prompt", prompt(sid))
    assert refused["error"]["code"] == -32000  # auth required
    assert container.room().controller_of(sid) is a.connection
    await a.connection.close()
    await b.connection.close()
