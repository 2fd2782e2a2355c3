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
