"""The real protocol agent (container, SQLite, use cases) with two in-process connections:
a session is acted on by the connections attached to it, several may follow one (also
attaching mid-turn), and closing or deleting waits for a cancelled turn. Kept whole (just
over 400 lines): every test here drives the same pair of connections on one agent."""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from adapters.acp_v1.agent import AcpAgent
from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.connection import Connection
from application.ports.llm import LLMClient, ModelEvent, ModelRequest, ModelResponse, TextChunk
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from domain.content import TextBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration


class GatedLLM(LLMClient):
    """Streams one chunk, then waits until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.streaming = asyncio.Event()

    def has_credentials(self) -> bool:
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextChunk(text="working ")
        self.streaming.set()
        await self.gate.wait()
        yield TextChunk(text="done")
        yield ModelResponse(
            content=(TextBlock(text="working done"),),
            stop=ModelStop.END_TURN,
            usage=Usage(input_tokens=1, output_tokens=2),
        )


class Peer:
    def __init__(self, agent: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        self.connection = Connection(self._send, agent)
        self._ids = iter(range(1, 10**6))
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        future = self._replies.get(message.get("id"))  # type: ignore[arg-type]
        if "method" not in message and future is not None and not future.done():
            future.set_result(message)

    async def start(self, method: str, params: dict[str, Any]) -> "asyncio.Future[dict[str, Any]]":
        request_id = next(self._ids)
        future = self._replies[request_id] = asyncio.get_running_loop().create_future()
        await self.connection.receive(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        return future

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.wait_for(await self.start(method, params), PATIENCE)

    def updates(self) -> list[dict[str, Any]]:
        return [m["params"]["update"] for m in self.sent if m.get("method") == "session/update"]


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Container, GatedLLM, Path]]:
    settings = Settings(
        provider="demo",
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
    )
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    llm = GatedLLM()
    container.llm.override(providers.Object(llm))
    yield container, llm, tmp_path
    await release(container)


def prompt(sid: str, text: str = "hi") -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def test_finding_11_a_connection_must_attach_before_it_acts(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()

    stolen = await b.call("session/prompt", prompt(sid, "mine now"))
    assert stolen["error"]["code"] == -32602
    assert "load or resume it here first" in stolen["error"]["message"]
    # Finding 11: every call of b on a's running session answers the same way.
    fork = await b.call("session/fork", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert fork["error"]["code"] == -32602 and fork["error"]["data"] == {"sessionId": sid}
    assert "another connection" in fork["error"]["message"]
    close = await b.call("session/close", {"sessionId": sid})  # not b's to close
    assert close["error"]["code"] == -32602 and close["error"]["data"] == {"sessionId": sid}
    await b.connection.receive(
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    )
    assert container.registry().is_busy(sid)  # b's cancel was not b's to send
    assert b.updates() == []  # b never saw a's session

    llm.gate.set()
    answer = await asyncio.wait_for(running, PATIENCE)
    assert answer["result"]["stopReason"] == "end_turn"
    assert [
        u["content"]["text"] for u in a.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["working ", "done"]
    await a.connection.close()
    await b.connection.close()


async def test_a_second_client_attaches_mid_turn_and_follows_it(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    new = await a.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    sid = new["result"]["sessionId"]
    assert new["result"]["_meta"]["iac_code"]["role"] == "controller"
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()

    loaded = await b.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert loaded["result"]["_meta"]["iac_code"]["role"] == "observer"
    # Mid-turn too, the answer comes after all b is sent for its load (the replay, then the
    # announce), and while the turn waits nothing follows it.
    assert b.sent[-1] is loaded
    assert [u["sessionUpdate"] for u in b.updates()][-2:] == [
        "available_commands_update",
        "usage_update",
    ]
    first = next(m for m in b.sent if m.get("method") == "session/update")
    assert first["params"]["_meta"]["iac_code"]["turn"] == {"state": "running"}
    assert first["params"]["update"]["sessionUpdate"] == "user_message_chunk"  # the history
    a_before = len(a.updates())

    llm.gate.set()
    answer = await asyncio.wait_for(running, PATIENCE)
    assert answer["result"]["stopReason"] == "end_turn"
    # b: the completed history, then live from its attach: the rest of the reply, once.
    b_chunks = [
        u["content"]["text"] for u in b.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert b_chunks == ["done"]
    # Whatever a got after b attached (but b's own replay and announce), b got too, in order.
    a_after = [u for u in a.updates()[a_before:]]
    b_live = [
        u
        for u in b.updates()
        if u["sessionUpdate"]
        not in ("user_message_chunk", "available_commands_update", "usage_update")
    ]
    a_live = [
        u
        for u in a_after
        if u["sessionUpdate"] not in ("available_commands_update", "usage_update")
    ]
    assert b_live == a_live and b_live
    assert not any(u["sessionUpdate"] == "user_message_chunk" for u in a_after)  # b's replay is b's

    # a leaves: b stays attached, and a prompt of b's makes it the controller.
    await a.connection.close()
    again = await b.call("session/prompt", prompt(sid, "still there?"))
    assert again["result"]["stopReason"] == "end_turn"
    assert container.room().controller_of(sid) is b.connection
    await b.connection.close()


async def test_an_observer_cancels_and_a_busy_prompt_is_refused(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    resumed = await b.call("session/resume", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert resumed["result"]["_meta"]["iac_code"]["role"] == "observer"
    busy = await b.call("session/prompt", prompt(sid, "me too"))
    assert busy["error"]["code"] == -32602 and "already running" in busy["error"]["message"]
    assert container.room().controller_of(sid) is a.connection  # still a's
    await b.connection.receive(
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    )
    assert (await asyncio.wait_for(running, PATIENCE))["result"]["stopReason"] == "cancelled"
    await a.connection.close()
    await b.connection.close()


async def test_close_detaches_and_only_the_last_close_ends_the_turn(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    await b.call("session/resume", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert (await a.call("session/close", {"sessionId": sid}))["result"] == {}
    assert container.registry().is_busy(sid)  # b still follows it
    assert container.room().controller_of(sid) is b.connection  # and controls it now
    assert (await b.call("session/close", {"sessionId": sid}))["result"] == {}
    assert (await asyncio.wait_for(running, PATIENCE))["result"]["stopReason"] == "cancelled"
    assert container.registry().find(sid) is None
    await a.connection.close()
    await b.connection.close()


async def test_delete_mid_prompt_cancels_cleanly(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a = Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    deleted = await a.call("session/delete", {"sessionId": sid})
    assert deleted == {"jsonrpc": "2.0", "id": deleted["id"], "result": {}}
    assert running.done()  # delete answered after the cancelled turn had finished
    assert running.result()["result"]["stopReason"] == "cancelled"
    listed = await a.call("session/list", {})
    assert listed["result"]["sessions"] == []
    await a.connection.close()


async def test_close_then_load_sees_the_finished_turn(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a = Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid, "first"))
    await llm.streaming.wait()
    await a.call("session/close", {"sessionId": sid})
    assert running.done()
    loaded = await a.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert "result" in loaded
    llm.gate.set()
    answer = await a.call("session/prompt", prompt(sid, "second"))
    assert answer["result"]["stopReason"] == "end_turn"
    await a.connection.close()


async def test_a_prompt_cannot_slip_into_a_closing_session(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a = Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    registry = container.registry()
    closing_turn = registry.find(sid).turn
    closing = await a.start("session/close", {"sessionId": sid})
    await closing_turn.finished.wait()  # the turn is over, close has not resumed yet
    late = await a.call("session/prompt", prompt(sid, "sneaking in"))
    assert late["error"]["code"] == -32602
    await asyncio.wait_for(closing, PATIENCE)
    assert (await running)["result"]["stopReason"] == "cancelled"
    assert registry.find(sid) is None
    await a.connection.close()


async def test_a_dropped_connection_detaches_and_its_turn_goes_on(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    turn = container.registry().find(sid).turn
    await a.connection.close()  # a's connection drops mid-turn: it only detaches
    assert not turn.finished.is_set()
    loaded = await b.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert loaded["result"]["_meta"]["iac_code"]["role"] == "controller"  # the only one left
    llm.gate.set()
    await asyncio.wait_for(turn.finished.wait(), PATIENCE)
    assert not running.done()  # a's answer had nowhere to go
    chunks = [
        u["content"]["text"] for u in b.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert chunks == ["done"]
    again = await b.call("session/prompt", prompt(sid, "still mine?"))
    assert again["result"]["stopReason"] == "end_turn"
    await b.connection.close()


async def test_another_connections_session_cannot_be_deleted(world) -> None:  # type: ignore[no-untyped-def]
    container, _, cwd = world
    a, b = Peer(container.agent()), Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    refused = await b.call("session/delete", {"sessionId": sid})
    assert refused["error"]["code"] == -32602
    assert (await a.call("session/delete", {"sessionId": sid}))["result"] == {}
    await a.connection.close()
    await b.connection.close()


class ManualTimers:
    """The agent's schedule, fired by the test: no real waiting."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Any, ManualTimers.Handle]] = []

    class Handle:
        cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    def __call__(self, delay: float, callback: Any) -> "ManualTimers.Handle":
        handle = ManualTimers.Handle()
        self.armed.append((delay, callback, handle))
        return handle

    def live(self) -> list[float]:
        return [delay for delay, _, handle in self.armed if not handle.cancelled]

    def fire(self) -> None:
        for _, callback, handle in self.armed:
            if not handle.cancelled:
                handle.cancelled = True
                callback()


def timed_agent(container: Container, timers: ManualTimers) -> AcpAgent:
    container.room.add_kwargs(detached_timeout=42.0, schedule=timers)
    return AcpAgent(container.use_cases(), container.room(), container.channels())


async def test_a_turn_left_alone_is_cancelled_when_the_detached_timeout_passes(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    timers = ManualTimers()
    a = Peer(timed_agent(container, timers))
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    turn = container.registry().find(sid).turn
    await a.connection.close()
    assert timers.live() == [42.0] and not turn.finished.is_set()
    timers.fire()
    await asyncio.wait_for(turn.finished.wait(), PATIENCE)
    for _ in range(100):  # the close that cancelled the turn drops it right after
        if container.registry().find(sid) is None:
            break
        await asyncio.sleep(0)
    assert container.registry().find(sid) is None


async def test_a_client_coming_back_in_time_stops_the_clock(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    timers = ManualTimers()
    agent = timed_agent(container, timers)
    a, b = Peer(agent), Peer(agent)
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    await a.connection.close()
    await b.call("session/resume", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert timers.live() == []
    timers.fire()  # nothing armed: nothing happens
    llm.gate.set()
    turn = container.registry().find(sid).turn
    await asyncio.wait_for(turn.finished.wait(), PATIENCE)
    assert not running.done()
    assert [
        u["content"]["text"] for u in b.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["done"]
    await b.connection.close()


async def test_an_idle_session_left_alone_is_closed_at_once(world) -> None:  # type: ignore[no-untyped-def]
    container, _, cwd = world
    timers = ManualTimers()
    a = Peer(timed_agent(container, timers))
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await a.connection.close()
    assert container.registry().find(sid) is None and timers.live() == []


async def test_a_restored_connection_is_attached_without_a_replay(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    agent = container.agent()
    a, b = Peer(agent), Peer(agent)
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    running = await a.start("session/prompt", prompt(sid))
    await llm.streaming.wait()
    assert await agent.restore_attachment(b.connection, sid) == "observer"
    [first] = b.sent
    assert first["params"]["update"] == {"sessionUpdate": "session_info_update"}
    assert first["params"]["_meta"]["iac_code"]["turn"] == {"state": "running"}
    llm.gate.set()
    await asyncio.wait_for(running, PATIENCE)
    assert [
        u["content"]["text"] for u in b.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["done"]
    await a.connection.close()
    await b.connection.close()


async def test_a_restored_connection_reopens_a_session_this_process_no_longer_has(world) -> None:  # type: ignore[no-untyped-def]
    container, llm, cwd = world
    agent = container.agent()
    a, b = Peer(agent), Peer(agent)
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await a.connection.close()  # idle, nobody left: closed (as after a restart, not in memory)
    assert container.registry().find(sid) is None
    assert await agent.restore_attachment(b.connection, sid, str(cwd)) == "controller"
    assert b.sent[0]["params"]["_meta"]["iac_code"]["turn"] == {"state": "idle"}
    llm.gate.set()
    answer = await b.call("session/prompt", prompt(sid, "back again"))
    assert answer["result"]["stopReason"] == "end_turn"
    assert "working done" in "".join(
        u["content"]["text"] for u in b.updates() if u["sessionUpdate"] == "agent_message_chunk"
    )
    await b.connection.close()
