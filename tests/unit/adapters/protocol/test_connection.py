import asyncio
import json
from typing import Any

import pytest

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError


class Asking(Dispatcher):
    """Answers every request by asking the client something first."""

    def __init__(self) -> None:
        self.outcome: Any = None

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        try:
            self.outcome = await peer.call("session/request_permission", {})
        except RpcError as exc:
            self.outcome = exc
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


async def test_a_malformed_client_error_still_fails_the_pending_call() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    agent = Asking()
    connection = Connection(send, agent)
    await connection.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x"}))
    for _ in range(100):
        if sent:
            break
        await asyncio.sleep(0)
    asked = sent[0]
    await connection.receive(
        json.dumps({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": "oops", "message": 1}})
    )
    await connection.close()
    assert isinstance(agent.outcome, RpcError)
    assert agent.outcome.code == -32603
    assert sent[-1] == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.parametrize("line", [b"[" * 100_000, b"{" * 50_000, b"\xff\xfe"])
async def test_hostile_lines_are_answered_not_raised(line: bytes) -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await Connection(send, Asking()).receive(line)
    assert sent[0]["id"] is None
    assert sent[0]["error"]["code"] in (-32700, -32600)


class Streaming(Dispatcher):
    """A turn whose model never waits: it sends updates until cancelled (or gives up)."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()
        self.sent = 0

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.started.set()
        while not self.cancelled.is_set() and self.sent < 3_000_000:
            self.sent += 1
            await peer.send_notification("session/update", {"n": self.sent})
        return {"stopReason": "cancelled" if self.cancelled.is_set() else "gave up"}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        if method == "session/cancel":
            self.cancelled.set()

    async def peer_closed(self, peer: Connection) -> None:
        pass


async def test_a_cancel_gets_in_while_a_turn_sends_updates_without_ever_waiting() -> None:
    answers: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:  # a transport that never waits
        if "id" in message:
            answers.append(message)

    agent = Streaming()
    connection = Connection(send, agent)
    loop = asyncio.get_running_loop()
    cancel = json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})

    def cancel_from_the_reader_thread() -> None:  # as the stdin reader hands a line over
        loop.call_soon_threadsafe(lambda: asyncio.ensure_future(connection.receive(cancel)))

    await connection.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/prompt"}))
    await agent.started.wait()
    await asyncio.to_thread(cancel_from_the_reader_thread)
    while not answers:
        await asyncio.sleep(0.01)
    await connection.close()

    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}]
    assert agent.sent > 1
