"""The client finishing (stdin's EOF) while the agent still loads waits for nothing of the
load (issue 42, finding 4): a prompt waiting for the agent answers what the face says its
EOF means (cancelled), its cancel is dropped, a session made early is not taken over (it is
stored: the next start finds it), and the connection closes at once. Other requests still
get their real answer, once the agent answers them."""

import asyncio
import json
from typing import Any

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher, Provisional

CANCELLED = {"stopReason": "cancelled"}


class Agent(Dispatcher):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.seen.append(method)
        return {"from": "agent"}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        self.seen.append(method)

    async def peer_closed(self, peer: Connection) -> None:
        self.seen.append("closed")


def _initialize(params: Any, peer: Connection) -> dict[str, Any]:
    return {}


async def _made_early(params: Any, peer: Connection) -> Provisional:
    async def step(agent: Dispatcher) -> None:
        raise AssertionError("nothing of the agent runs after the client finished")

    return Provisional({"sessionId": "s"}, take_over=step, then=step)


def _line(id: int | None, method: str, params: dict[str, Any]) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return json.dumps(message)


async def test_finding_4_eof_while_the_agent_loads_answers_waiting_prompts_and_closes_at_once() -> (
    None
):
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = LazyDispatcher(
        _initialize,
        loading,
        {"session/new": _made_early},
        cancelled_by={"session/prompt": "session/cancel"},
        answered_at_eof={"session/prompt": CANCELLED},
    )
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    connection = Connection(send, lazy)
    await connection.receive(_line(1, "session/new", {"cwd": "/"}))
    await connection.receive(_line(2, "session/prompt", {"sessionId": "s", "prompt": []}))
    await connection.receive(_line(None, "session/cancel", {"sessionId": "s"}))
    # The agent never loads: everything above ends without it, within the backstop only.
    await asyncio.wait_for(connection.finish(bound=60), 10)
    answers = {m["id"]: m.get("result") for m in sent if "id" in m}
    assert answers == {1: {"sessionId": "s"}, 2: CANCELLED}
    assert not [m for m in sent if "method" in m]  # nothing follows: no announce


async def test_finding_4_a_request_other_than_a_prompt_still_gets_the_agents_answer() -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = LazyDispatcher(_initialize, loading, answered_at_eof={"session/prompt": CANCELLED})
    listing = asyncio.ensure_future(lazy.accept("session/list", {}, _peer()))
    lazy.finishing(_peer())
    await asyncio.sleep(0)
    assert not listing.done()  # it waits for the agent, as issue 25 wants
    agent = Agent()
    loading.set_result(agent)
    assert await listing == {"from": "agent"}


def _peer() -> Connection:
    return Connection(_nowhere, Agent())


async def _nowhere(message: dict[str, Any]) -> None:
    pass
