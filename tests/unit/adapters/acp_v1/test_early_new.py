"""session/new answered before the agent has loaded (issue 34): plain JSON equal to the
agent's answer, only for params that open nothing but a cwd, and a session the loaded
agent takes over before it serves anything else."""

import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from adapters.acp_v1 import results
from adapters.acp_v1.early_new import EarlyNewSession
from adapters.acp_v1.handshake import initialize_answer
from adapters.acp_v1.openers import with_role
from adapters.acp_v1.plain_new import plain_new_cwd, plain_new_result
from adapters.protocol.connection import AnswerThen, Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher, Provisional
from application.attachments.ownership import Role
from application.dto import SessionState
from application.handshake.initialize import Initialize
from domain.config import Choice, SelectOption
from domain.ids import MessageId, SessionId
from domain.modes import Mode, offered_modes
from domain.session import Session

MODES = offered_modes(allow_bypass=True)
OPTION = SelectOption(
    id="model",
    name="Model",
    category="model",
    current_value="b",
    choices=(Choice(value="a", name="A"), Choice(value="b", name="B", description="the B")),
    description="Which model answers",
)
STATES = [
    SessionState(session_id="s1", current_mode_id="default", modes=MODES, options=(OPTION,)),
    SessionState(
        session_id="s2",
        current_mode_id="x",
        modes=(Mode(id="x", name="X"),),
        options=(
            SelectOption(id="o", name="O", category=None, current_value="v", choices=()),
            OPTION,
        ),
    ),
    SessionState(session_id="s3", current_mode_id="plan", modes=MODES, options=()),
]


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("role", list(Role))
def test_the_plain_result_is_the_agents(state: SessionState, role: Role) -> None:
    assert plain_new_result(state, role) == with_role(results.new_session_result(state), role)


@pytest.mark.parametrize(
    ("params", "taken"),
    [
        ({"cwd": "{dir}"}, True),
        ({"cwd": "{dir}", "mcpServers": []}, True),
        ({"cwd": "{dir}", "mcpServers": [{"name": "s", "command": "c"}]}, False),
        ({"cwd": "{dir}", "mcpServers": {}}, False),
        ({"cwd": "{dir}", "additionalDirectories": []}, False),
        ({"cwd": "{dir}", "_meta": {}}, False),
        ({"cwd": "relative"}, False),  # the agent says what is wrong
        ({"cwd": "{dir}/missing"}, False),
        ({"cwd": 1}, False),
        ({}, False),
        (None, False),
    ],
)
def test_only_params_opening_nothing_but_a_cwd_are_taken(
    tmp_path: Path, params: dict[str, Any] | None, taken: bool
) -> None:
    if params is not None and isinstance(params.get("cwd"), str):
        params = {**params, "cwd": params["cwd"].replace("{dir}", str(tmp_path))}
    assert plain_new_cwd(params) == (str(tmp_path) if taken else None)


class Ids:
    def session_id(self) -> SessionId:
        return SessionId("sess_early")

    def message_id(self) -> MessageId:
        return MessageId("msg_1")


class Clock:
    def now(self) -> datetime:
        return datetime(2026, 12, 5, tzinfo=UTC)


def early(stored: list[Session], *, takes: bool = True) -> EarlyNewSession:
    from domain.config import Catalog

    def store(session: Session) -> bool:
        if takes:
            stored.append(session)
        return takes

    catalog = Catalog(modes=MODES, models=(), default_mode="plan", default_thought_level="low")
    return EarlyNewSession(
        store=store, catalog=catalog, default_model="m", ids=Ids(), clock=Clock()
    )


PEER = cast(Connection, object())


async def test_a_stored_session_is_answered_as_the_agent_would(tmp_path: Path) -> None:
    stored: list[Session] = []
    answer = await early(stored)({"cwd": str(tmp_path), "mcpServers": []}, PEER)
    assert isinstance(answer, Provisional)
    [session] = stored
    assert (session.id, session.cwd, session.mode_id, session.model) == (
        "sess_early",
        str(tmp_path),
        "plan",
        "m",
    )
    assert answer.result["sessionId"] == "sess_early"
    assert answer.result["modes"]["currentModeId"] == "plan"
    assert answer.result["_meta"] == {"iac_code": {"role": "controller"}}


async def test_what_the_store_does_not_take_is_left_to_the_agent(tmp_path: Path) -> None:
    assert await early([], takes=False)({"cwd": str(tmp_path)}, PEER) is None
    stored: list[Session] = []
    assert await early(stored)({"cwd": "relative"}, PEER) is None
    assert stored == []


class Agent(Dispatcher):
    """Records what reached it, in order; `take_over` waits for `release`."""

    def __init__(self, *, fails: bool = False) -> None:
        self.seen: list[str] = []
        self.release = asyncio.Event()
        self.fails = fails

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None:
        self.seen.append(f"take_over {session_id}")
        await self.release.wait()
        self.seen.append("taken")
        if self.fails:
            raise RuntimeError("could not")

    async def announce(self, session_id: str) -> None:
        self.seen.append(f"announce {session_id}")

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        self.seen.append(method)
        return {"from": "agent"}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        self.seen.append(method)

    async def peer_closed(self, peer: Connection) -> None:
        self.seen.append("closed")


def dispatcher(loading: "asyncio.Future[Dispatcher]", tmp_path: Path) -> LazyDispatcher:
    made = early([])
    return LazyDispatcher(initialize_answer(cast(Initialize, None)), loading, {"session/new": made})


async def test_the_agent_takes_the_session_over_before_it_serves_anything_else(
    tmp_path: Path,
) -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = dispatcher(loading, tmp_path)
    answer = await lazy.accept("session/new", {"cwd": str(tmp_path)}, PEER)
    assert isinstance(answer, AnswerThen) and answer.result["sessionId"] == "sess_early"
    prompt = asyncio.ensure_future(lazy.accept("session/prompt", {}, PEER))
    then = asyncio.ensure_future(answer.then())  # the transport, once the answer is sent
    agent = Agent()
    loading.set_result(agent)
    await asyncio.sleep(0.01)
    assert agent.seen == ["take_over sess_early"]  # the prompt waits for the take-over
    late = asyncio.ensure_future(lazy.accept("session/load", {}, PEER))  # loaded, not taken
    await asyncio.sleep(0.01)
    assert agent.seen == ["take_over sess_early"]
    agent.release.set()
    assert await prompt == {"from": "agent"} and await late == {"from": "agent"}
    await then
    # What follows the answer (the commands, the context usage) too, before anything else:
    # the client gets the updates in the order a loaded agent sends them (issue 42).
    assert agent.seen[:3] == ["take_over sess_early", "taken", "announce sess_early"]
    assert sorted(agent.seen[3:]) == ["session/load", "session/prompt"]
    assert await lazy.accept("session/list", {}, PEER) == {"from": "agent"}  # directly now


async def test_finding_4_a_request_waits_for_the_announce_which_waits_for_the_answer(
    tmp_path: Path,
) -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = dispatcher(loading, tmp_path)
    answer = await lazy.accept("session/new", {"cwd": str(tmp_path)}, PEER)
    prompt = asyncio.ensure_future(lazy.accept("session/prompt", {}, PEER))
    agent = Agent()
    agent.release.set()
    loading.set_result(agent)
    await asyncio.sleep(0.01)
    assert agent.seen == ["take_over sess_early", "taken"]  # the answer is not out yet
    assert not prompt.done()
    await answer.then()  # the transport, once the answer is sent
    assert await prompt == {"from": "agent"}
    assert agent.seen == ["take_over sess_early", "taken", "announce sess_early", "session/prompt"]


async def test_a_failed_take_over_is_logged_and_the_agent_serves_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = dispatcher(loading, tmp_path)
    answer = await lazy.accept("session/new", {"cwd": str(tmp_path)}, PEER)
    agent = Agent(fails=True)
    agent.release.set()
    with caplog.at_level(logging.ERROR):
        loading.set_result(agent)
        await answer.then()
        assert await lazy.accept("session/prompt", {}, PEER) == {"from": "agent"}
    assert "could not take over" in caplog.text
    assert agent.seen == ["take_over sess_early", "taken", "announce sess_early", "session/prompt"]


async def test_a_client_gone_before_the_take_over_leaves_after_it(tmp_path: Path) -> None:
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = dispatcher(loading, tmp_path)
    await lazy.accept("session/new", {"cwd": str(tmp_path)}, PEER)
    closing = asyncio.ensure_future(lazy.peer_closed(PEER))
    agent = Agent()
    loading.set_result(agent)
    await asyncio.sleep(0.01)
    assert not closing.done()
    agent.release.set()
    await closing
    assert agent.seen == ["take_over sess_early", "taken", "closed"]


class Accepting(Agent):
    """Records when each request is accepted (synchronously, as AcpAgent registers a prompt)."""

    def accept(self, method: str, params: Any, peer: Connection) -> Any:
        self.seen.append(f"accepted {method}")
        return self.handle_request(method, params, peer)


async def test_what_waited_for_the_take_over_reaches_the_agent_in_the_order_it_came(
    tmp_path: Path,
) -> None:
    """A prompt and the cancel written right behind it, both read while the agent loads:
    the prompt is accepted (registered) before the cancel is handled, as once loaded."""
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = dispatcher(loading, tmp_path)
    answer = await lazy.accept("session/new", {"cwd": str(tmp_path)}, PEER)
    prompt = asyncio.ensure_future(lazy.accept("session/prompt", {}, PEER))
    cancel = asyncio.ensure_future(lazy.handle_notification("session/cancel", {}, PEER))
    await asyncio.sleep(0)
    agent = Accepting()
    agent.release.set()
    loading.set_result(agent)
    await answer.then()
    await prompt
    await cancel
    assert agent.seen == [
        "take_over sess_early",
        "taken",
        "announce sess_early",
        "accepted session/prompt",
        "session/prompt",
        "session/cancel",
    ]
