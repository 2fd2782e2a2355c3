"""session/list answered before the agent has loaded: plain JSON equal to the agent's,
only for params the agent takes as they are, and only until the agent is there."""

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, cast

import pytest

from adapters.acp_v1 import results
from adapters.acp_v1.handshake import initialize_answer
from adapters.acp_v1.listing import plain_list_params, plain_list_result
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher
from application.handshake.initialize import Initialize
from application.ports.session_listing import SessionSummary
from application.sessions.listing import SessionPage
from domain.ids import SessionId

AT = datetime(2026, 3, 4, 5, 6, 7, 89, tzinfo=UTC)


def summary(i: int, **changes: Any) -> SessionSummary:
    fields: dict[str, Any] = {
        "session_id": SessionId(f"s{i}"),
        "cwd": "/p",
        "title": f"T{i}",
        "updated_at": AT,
        "message_count": i,
        **changes,
    }
    return SessionSummary(**fields)


PAGES = [
    SessionPage(sessions=[], next_cursor=None),
    SessionPage(
        sessions=[
            summary(1),
            summary(2, title=None),
            summary(3, additional_directories=("/a", "/b")),
            summary(4, title="", updated_at=AT.astimezone(timezone(timedelta(hours=-3)))),
            summary(5, title="é ✓ \ufffd", updated_at=AT.replace(microsecond=0)),
        ],
        next_cursor="abc",
    ),
]


@pytest.mark.parametrize("page", PAGES)
def test_the_plain_result_is_the_agents(page: SessionPage) -> None:
    plain = plain_list_result(page)
    assert plain == results.list_result(page)
    assert list(plain) == list(results.list_result(page))
    for mine, theirs in zip(plain["sessions"], results.list_result(page)["sessions"], strict=True):
        assert list(mine) == list(theirs)  # the same fields, in the same order


@pytest.mark.parametrize(
    ("params", "taken"),
    [
        (None, (None, None)),
        ({}, (None, None)),
        ({"cwd": "/p"}, ("/p", None)),
        ({"cwd": None, "cursor": "c"}, (None, "c")),
        ({"cwd": "p"}, None),  # relative: the agent says what is wrong
        ({"cwd": 1}, None),
        ({"cursor": 2}, None),
        ({"cwd": "/p", "_meta": {}}, None),
        ([], None),
    ],
)
def test_only_plainly_valid_params_are_taken(params: Any, taken: Any) -> None:
    assert plain_list_params(params) == taken


class Agent(Dispatcher):
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.asked.append(method)
        return {"from": "agent"}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


def lazy(agent: "asyncio.Future[Dispatcher]", answer: Any) -> LazyDispatcher:
    async def early(params: dict[str, Any] | None, peer: Connection) -> Any:
        return answer

    facts = cast(Initialize, None)
    return LazyDispatcher(initialize_answer(facts), agent, {"session/list": early})


PEER = cast(Connection, None)


async def test_an_early_answer_serves_while_the_agent_loads() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    assert await lazy(agent, {"from": "early"}).handle_request("session/list", {}, PEER) == {
        "from": "early"
    }


async def test_a_declined_request_waits_for_the_agent() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    asking = asyncio.ensure_future(lazy(agent, None).handle_request("session/list", {}, PEER))
    await asyncio.sleep(0)
    assert not asking.done()
    loaded = Agent()
    agent.set_result(loaded)
    assert await asking == {"from": "agent"} and loaded.asked == ["session/list"]


async def test_once_loaded_the_agent_answers_everything() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    loaded = Agent()
    agent.set_result(loaded)
    dispatcher = lazy(agent, {"from": "early"})
    assert await dispatcher.handle_request("session/list", {}, PEER) == {"from": "agent"}
    assert await dispatcher.handle_request("session/new", {}, PEER) == {"from": "agent"}
