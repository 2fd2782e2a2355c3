"""`$/cancel_request`: a client ends one of its in-flight requests by id."""

import asyncio
import json
from typing import Any

import pytest

from adapters.protocol.connection import CallWithdrawn, Connection, Dispatcher

DEADLINE = 10.0


class Holding(Dispatcher):
    """`session/prompt` runs until its session is cancelled; `slow` until it is cancelled;
    `quick` answers at once."""

    def __init__(self) -> None:
        self.turn_cancelled = asyncio.Event()
        self.started: set[str] = set()
        self.cancels: list[tuple[str, Any]] = []
        self.torn_down = asyncio.Event()

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.started.add(method)
        if method == "session/prompt":
            await self.turn_cancelled.wait()
            return {"stopReason": "cancelled"}
        if method == "slow":
            try:
                await asyncio.Event().wait()
            finally:
                self.torn_down.set()
        return {"method": method}

    def cancelled_by(self, method: str) -> str | None:
        return "session/cancel" if method == "session/prompt" else None  # as ACP v1's

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        self.cancels.append((method, params))
        if method == "session/cancel":
            self.turn_cancelled.set()

    async def peer_closed(self, peer: Connection) -> None:
        pass


async def until(condition: Any) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.001)


def line(message: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


def cancel(request_id: Any) -> str:
    return line({"method": "$/cancel_request", "params": {"requestId": request_id}})


async def serving() -> tuple[Connection, Holding, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    agent = Holding()
    return Connection(send, agent), agent, sent


async def test_a_cancelled_prompt_ends_as_session_cancel_would() -> None:
    connection, agent, sent = await serving()
    prompt = {"sessionId": "s1", "prompt": []}
    await connection.receive(line({"id": 7, "method": "session/prompt", "params": prompt}))
    await until(lambda: "session/prompt" in agent.started)
    await connection.receive(cancel(7))
    await until(lambda: sent)
    await connection.close()

    assert agent.cancels == [("session/cancel", {"sessionId": "s1"})]
    assert sent == [{"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "cancelled"}}]


async def test_any_other_request_is_answered_request_cancelled() -> None:
    connection, agent, sent = await serving()
    await connection.receive(line({"id": "a-1", "method": "slow", "params": {}}))
    await until(lambda: "slow" in agent.started)
    await connection.receive(cancel("a-1"))
    await until(lambda: sent)
    await connection.close()

    assert sent == [
        {"jsonrpc": "2.0", "id": "a-1", "error": {"code": -32800, "message": "request cancelled"}}
    ]
    assert agent.torn_down.is_set()  # the handler was interrupted, not left running
    assert agent.cancels == []


async def test_unknown_finished_and_mistyped_ids_are_ignored() -> None:
    connection, agent, sent = await serving()
    await connection.receive(line({"id": 1, "method": "quick", "params": {}}))
    await until(lambda: sent)
    await connection.receive(line({"id": 2, "method": "slow", "params": {}}))
    await until(lambda: "slow" in agent.started)
    for request_id in (1, 99, "2", 2.0, True, None, [2]):  # none of them names request 2
        await connection.receive(cancel(request_id))
    await connection.receive(line({"method": "$/cancel_request"}))
    await connection.receive(line({"id": 3, "method": "quick", "params": {}}))
    await until(lambda: len(sent) == 2)
    assert sent == [
        {"jsonrpc": "2.0", "id": 1, "result": {"method": "quick"}},
        {"jsonrpc": "2.0", "id": 3, "result": {"method": "quick"}},
    ]
    assert not agent.torn_down.is_set()  # request 2 still runs
    await connection.receive(cancel(2))
    await until(lambda: len(sent) == 3)
    assert sent[-1]["id"] == 2 and sent[-1]["error"]["code"] == -32800
    await connection.close()


async def test_a_second_cancel_of_the_same_request_answers_once() -> None:
    connection, agent, sent = await serving()
    await connection.receive(line({"id": 5, "method": "slow", "params": {}}))
    await until(lambda: "slow" in agent.started)
    await connection.receive(cancel(5))
    await connection.receive(cancel(5))
    await until(lambda: sent)
    await connection.receive(cancel(5))  # finished by now
    await connection.close()
    assert [m["id"] for m in sent] == [5]


async def test_closing_the_connection_does_not_answer_as_cancelled() -> None:
    connection, agent, sent = await serving()
    await connection.receive(line({"id": 5, "method": "slow", "params": {}}))
    await until(lambda: "slow" in agent.started)
    await connection.close(grace=0.01)
    assert agent.torn_down.is_set()
    assert sent == []


async def test_the_agent_withdraws_its_own_request_and_ignores_a_late_answer() -> None:
    connection, _, sent = await serving()
    call = await connection.start_call("session/request_permission", {"sessionId": "s1"})
    await call.withdraw()
    assert sent[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": call.id},
    }
    with pytest.raises(CallWithdrawn):
        await call.result()
    await connection.receive(line({"id": call.id, "result": {}}))  # late: ignored
    await call.withdraw()  # twice: nothing more is sent
    assert [m.get("method") for m in sent] == ["session/request_permission", "$/cancel_request"]
    await connection.close()


async def test_finding_5_a_cancel_request_read_right_behind_its_request_is_answered() -> None:
    connection, agent, sent = await serving()
    await connection.receive(line({"id": 8, "method": "slow"}))
    await connection.receive(cancel(8))  # before the request's task first ran
    await until(lambda: sent)
    await connection.close()

    assert sent == [
        {"jsonrpc": "2.0", "id": 8, "error": {"code": -32800, "message": "request cancelled"}}
    ]
    assert "slow" not in agent.started  # never served
