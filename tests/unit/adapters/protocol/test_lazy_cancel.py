"""Which requests end their own way when cancelled is the face's: the lazy dispatcher asks
the table it was handed until the agent has loaded, then the agent; the connection asks its
dispatcher (it knows no method's name). A prompt waiting for the agent, cancelled, answers
through its session's cancel as it would once loaded."""

import asyncio
import json
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher


class Agent(Dispatcher):
    """Once loaded: a prompt runs until its session is cancelled."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.notified: list[tuple[str, Any]] = []

    def cancelled_by(self, method: str) -> str | None:
        return "x/stop" if method == "x/run" else None

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        await self.cancelled.wait()
        return {"stopped": True}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        self.notified.append((method, params))
        if method == "x/stop":
            self.cancelled.set()

    async def peer_closed(self, peer: Connection) -> None:
        pass


def _answer(params: Any, peer: Connection) -> dict[str, Any]:
    return {}


async def test_the_face_says_which_requests_end_their_own_way_until_the_agent_loads() -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = LazyDispatcher(_answer, loading, cancelled_by={"x/run": "x/wait"})
    assert (lazy.cancelled_by("x/run"), lazy.cancelled_by("x/other")) == ("x/wait", None)
    loading.set_result(Agent())
    assert lazy.cancelled_by("x/run") == "x/stop"  # the agent's, once loaded
    assert Dispatcher.cancelled_by(lazy, "x/run") is None  # a dispatcher's default: none


async def test_a_request_cancelled_is_ended_through_the_notification_its_dispatcher_names() -> None:
    agent = Agent()
    answers: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        answers.append(message)

    connection = Connection(send, agent)
    await connection.receive(json.dumps({"id": 1, "method": "x/run", "params": {"sessionId": "s"}}))
    await connection.receive(json.dumps({"method": "$/cancel_request", "params": {"requestId": 1}}))
    for _ in range(500):
        if answers:
            break
        await asyncio.sleep(0.01)
    assert agent.notified == [("x/stop", {"sessionId": "s"})]
    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {"stopped": True}}]
    await connection.close()
