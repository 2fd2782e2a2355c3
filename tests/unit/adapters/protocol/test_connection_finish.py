"""`Connection.finish` (stdin's EOF): every request read is answered before the connection
closes (issue 25, finding 6)."""

import asyncio
import json
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher

BACKSTOP = 30.0  # never reached when the code is right


class Slow(Dispatcher):
    """`session/prompt` runs until its session is cancelled; `slow` until `release` is set
    (or forever: `stuck`); `session/new` answers at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.started: set[str] = set()

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.started.add(method)
        if method == "session/prompt":
            await self.cancelled.wait()
            return {"stopReason": "cancelled"}
        if method == "slow":
            await self.release.wait()
        if method == "stuck":
            await asyncio.Event().wait()
        return {"method": method}

    def cancelled_by(self, method: str) -> str | None:
        return "session/cancel" if method == "session/prompt" else None  # as ACP v1's

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        if method == "session/cancel":
            self.cancelled.set()

    async def peer_closed(self, peer: Connection) -> None:
        pass


def _request(id: int | None, method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


async def _connection() -> tuple[Connection, Slow, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    agent = Slow()
    return Connection(send, agent), agent, sent


async def test_finding_6_every_request_read_before_eof_gets_its_answer() -> None:
    connection, agent, sent = await _connection()
    await connection.receive(_request(1, "session/prompt", {"sessionId": "s"}))
    await connection.receive(_request(2, "slow"))
    await connection.receive(_request(None, "session/new"))  # a null id is answered too
    finishing = asyncio.ensure_future(connection.finish(BACKSTOP))
    while "slow" not in agent.started:
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not finishing.done()  # waiting for `slow`, however long it takes (within bound)
    agent.release.set()
    await asyncio.wait_for(finishing, BACKSTOP)
    answers = {m["id"]: m for m in sent}
    assert answers[1]["result"] == {"stopReason": "cancelled"}  # the prompt was cancelled
    assert answers[2]["result"] == {"method": "slow"}
    assert answers[None]["result"] == {"method": "session/new"}


async def test_finding_6_a_request_still_running_past_the_bound_is_told_the_server_stops() -> None:
    connection, _, sent = await _connection()
    await connection.receive(_request(7, "stuck"))
    await asyncio.wait_for(connection.finish(0.01), BACKSTOP)
    assert sent == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": -32603,
                "message": "Internal error: the server is shutting down before this "
                "request finished.",
                "data": {"method": "stuck", "reason": "shutting_down", "waitedSeconds": 0.01},
            },
        }
    ]  # and only once: its task, cancelled at close, answers nothing more
