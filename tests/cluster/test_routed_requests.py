"""Requests that must reach the replica running a session's turn (issue 32), with two real
replicas on one PostgreSQL database and the official ACP client connected straight to
each replica (no balancer: which replica a client is on is the point).

Client A is on replica 1, where its turns run; client B, on replica 2, follows the same
session (loaded there while idle) and acts on A's turns from there."""

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)
from acp.ws import create_websocket_stream

from tests.cluster.conftest import database_kind
from tests.support.cluster import Replica, start_replica, wait_until_ready

pytestmark = pytest.mark.cluster

DEADLINE = 60.0  # for anything polled: far above a turn, a lease and a start
# ~100 demo tokens a reply at 25 a second: a turn lasts seconds, long enough to act on.
# A dead replica's lease lapses at most LEASE seconds after it died (at least 2/3 of it).
LEASE = 10
ENV = {"IAC_CODE_LEASE_SECONDS": str(LEASE), "IAC_CODE_DEMO_PACE": "25"}


@dataclass
class Follower:
    """One client: records updates and raw messages; answers permission requests with
    `answer` (an option id), or holds them until `release` is set (then cancels)."""

    answer: str | None = None
    release: asyncio.Event = field(default_factory=asyncio.Event)
    asked: list[str] = field(default_factory=list)  # tool call ids
    updates: list[Any] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)  # from the agent, raw

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call.tool_call_id)
        if self.answer is not None:
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
            )
        await self.release.wait()
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def observe(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.received.append(json.loads(json.dumps(event.message)))

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def permission_ids(self) -> list[Any]:
        return [m["id"] for m in self.received if m.get("method") == "session/request_permission"]

    def withdrawn(self) -> list[Any]:
        return [
            m["params"]["requestId"] for m in self.received if m.get("method") == "$/cancel_request"
        ]


@dataclass
class Pair:
    replicas: dict[str, Replica]
    token: str


@pytest.fixture
def pair(tmp_path: Path, database_url: str) -> Iterator[Pair]:
    if database_kind() != "postgres":
        pytest.skip("requests are routed between replicas on PostgreSQL only")
    token = f"routed-{uuid.uuid4().hex}"
    started: list[Replica] = []
    try:
        for name in ("r1", "r2"):
            started.append(start_replica(name, tmp_path, database_url, token, ENV))
        for replica in started:
            wait_until_ready(replica)
        yield Pair({r.id: r for r in started}, token)
    finally:
        for replica in started:
            replica.stop()


@asynccontextmanager
async def connected(
    pair: Pair, replica: str, follower: Follower, capabilities: ClientCapabilities | None = None
) -> AsyncIterator[Any]:
    url = pair.replicas[replica].url.replace("http://", "ws://") + "/acp"
    transport = await create_websocket_stream(
        url, headers={"Authorization": f"Bearer {pair.token}"}
    )
    conn = connect_to_agent(follower, transport, observers=[follower.observe])
    try:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities(),
            client_info=Implementation(name=f"client-on-{replica}", version="1"),
        )
        yield conn
    finally:
        follower.release.set()
        await conn.close()
        await transport.close()


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


@asynccontextmanager
async def a_and_b(
    pair: Pair, cwd: Path, a: Follower, b: Follower
) -> AsyncIterator[tuple[Any, Any, str]]:
    """A's session, made on replica 1, loaded by B on replica 2 while idle."""
    async with connected(pair, "r1", a) as conn_a, connected(pair, "r2", b) as conn_b:
        session = await conn_a.new_session(cwd=str(cwd), mcp_servers=[])
        await conn_b.load_session(cwd=str(cwd), session_id=session.session_id, mcp_servers=[])
        yield conn_a, conn_b, session.session_id


def text_of(follower: Follower) -> str:
    return "".join(
        u.content.text for u in follower.updates if u.session_update == "agent_message_chunk"
    )


def prompt(conn: Any, session_id: str, text: str) -> "asyncio.Task[Any]":
    return asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block(text)]))


async def test_b_answers_the_permission_request_of_a_turn_running_on_the_other_replica(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower(answer="allow_once")  # A holds its copy; B answers
    async with a_and_b(pair, tmp_path, a, b) as (conn_a, _conn_b, sid):
        turn = prompt(conn_a, sid, "create notes.txt with written once")
        done = await asyncio.wait_for(turn, DEADLINE)
        await until(lambda: a.withdrawn() != [], "A's copy withdrawn")

    assert done.stop_reason == "end_turn"
    assert (tmp_path / "notes.txt").read_text() == "written once"
    assert len(a.asked) == len(b.asked) == 1 and a.asked == b.asked  # one request, two copies
    assert a.withdrawn() == a.permission_ids()  # A's copy, withdrawn once B's answer won
    assert b.withdrawn() == []
    [call_id] = a.asked
    completed = [
        u
        for u in a.updates
        if u.session_update == "tool_call_update"
        and u.tool_call_id == call_id
        and u.status == "completed"
    ]
    assert len(completed) == 1  # the tool ran once, on replica 1


async def test_a_client_loading_while_a_request_is_pending_gets_its_copy(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower(answer="allow_once")
    async with connected(pair, "r1", a) as conn_a, connected(pair, "r2", b) as conn_b:
        session = await conn_a.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        # B attaches on replica 2 only once the request is pending on replica 1.
        other = Follower()
        async with connected(pair, "r2", other) as conn_other:
            await conn_other.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            turn = prompt(conn_a, sid, "create late.txt with answered from afar")
            await until(lambda: a.asked != [], "A asked")
            await conn_b.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            done = await asyncio.wait_for(turn, DEADLINE)
            await until(lambda: other.withdrawn() != [], "the other copy withdrawn")
    assert done.stop_reason == "end_turn"
    assert b.asked == a.asked
    assert (tmp_path / "late.txt").read_text() == "answered from afar"


async def test_b_cancels_a_turn_running_on_the_other_replica(pair: Pair, tmp_path: Path) -> None:
    a, b = Follower(), Follower()
    async with a_and_b(pair, tmp_path, a, b) as (conn_a, conn_b, sid):
        first = await conn_a.prompt(session_id=sid, prompt=[text_block("hello")])
        assert first.stop_reason == "end_turn"
        mark = len(a.updates)
        turn = prompt(conn_a, sid, "hello again")
        await until(lambda: "agent_message_chunk" in a.kinds()[mark:], "A's turn streaming")
        await conn_b.cancel(session_id=sid)
        done = await asyncio.wait_for(turn, DEADLINE)
    assert done.stop_reason == "cancelled"


async def test_b_sets_the_mode_during_a_turn_and_it_applies_at_the_next_tool_call(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower()  # neither answers: a request would hang the turn
    async with a_and_b(pair, tmp_path, a, b) as (conn_a, conn_b, sid):
        turn = prompt(conn_a, sid, "create mode.txt with no question asked")
        await until(lambda: "agent_message_chunk" in a.kinds(), "A's turn streaming")
        with pytest.raises(RequestError) as refused:  # the holder's own error, as sent
            await conn_b.set_session_mode(session_id=sid, mode_id="no-such-mode")
        await conn_b.set_session_mode(session_id=sid, mode_id="accept_edits")
        done = await asyncio.wait_for(turn, DEADLINE)

    assert refused.value.code == -32602
    assert refused.value.data["available"] == ["default", "accept_edits", "plan"]
    assert done.stop_reason == "end_turn"
    assert a.asked == b.asked == []  # the write needed no permission: the mode had changed
    assert (tmp_path / "mode.txt").read_text() == "no question asked"
    modes = [u.current_mode_id for u in a.updates if u.session_update == "current_mode_update"]
    assert modes == ["accept_edits"]  # applied by replica 1, which told its client


async def test_a_steer_from_b_reaches_the_turn_running_on_the_other_replica(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower()
    async with a_and_b(pair, tmp_path, a, b) as (conn_a, conn_b, sid):
        turn = prompt(conn_a, sid, "hello")
        await until(lambda: "agent_message_chunk" in a.kinds(), "A's turn streaming")
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": "also say bananas"}]}
        steered = await asyncio.wait_for(conn_b.ext_method("session/steering", params), DEADLINE)
        done = await asyncio.wait_for(turn, DEADLINE)

    assert steered["outcome"] == "injected", steered
    assert done.stop_reason == "end_turn"  # one turn, which took the message
    said = [
        (u.message_id, u.content.text)
        for u in a.updates
        if u.session_update == "user_message_chunk"
    ]
    assert said == [(steered["_meta"]["iac_code"]["messageId"], "also say bananas")]


async def test_a_queued_prompt_from_b_waits_in_the_queue_of_the_replica_running_the_turn(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower()
    queues = ClientCapabilities(field_meta={"iac_code": {"promptQueueing": True}})
    async with connected(pair, "r1", a) as conn_a, connected(pair, "r2", b, queues) as conn_b:
        session = await conn_a.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        await conn_b.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        first = prompt(conn_a, sid, "hello from a")
        await until(lambda: "agent_message_chunk" in a.kinds(), "A's turn streaming")
        second = prompt(conn_b, sid, "hello from b")
        done_a = await asyncio.wait_for(first, DEADLINE)
        done_b = await asyncio.wait_for(second, DEADLINE)
        # B's own turn ran on replica 1: B sees it through the relay, which may deliver
        # after B's prompt was answered.
        await until(lambda: "You said: hello from b" in text_of(b), "B's turn relayed to B")

    assert (done_a.stop_reason, done_b.stop_reason) == ("end_turn", "end_turn")
    # Both turns ran on replica 1, one after the other, and both clients saw them in order.
    for client in (a, b):
        said = text_of(client)
        assert said.index("You said: hello from a") < said.index("You said: hello from b")


async def test_a_request_routed_to_a_replica_that_died_is_answered_with_an_error(
    pair: Pair, tmp_path: Path
) -> None:
    a, b = Follower(), Follower()  # nobody answers: the turn waits on replica 1
    async with connected(pair, "r2", b) as conn_b, connected(pair, "r1", a) as conn_a:
        session = await conn_a.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        await conn_b.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        turn = prompt(conn_a, sid, "create never.txt with never written")
        await until(lambda: b.asked != [], "B's copy of the request")
        pair.replicas["r1"].kill()  # mid-turn, its lease still live for seconds
        with pytest.raises(RequestError) as stopped:
            await asyncio.wait_for(
                conn_b.set_session_mode(session_id=sid, mode_id="plan"), DEADLINE
            )
        await until(lambda: b.withdrawn() != [], "B's copy withdrawn")
        turn.cancel()

    assert stopped.value.code == -32603
    assert "stopped before it answered session/set_mode" in str(stopped.value)
    assert stopped.value.data == {
        "sessionId": sid,
        "method": "session/set_mode",
        "replica": "r1",
    }
    assert b.withdrawn() == b.permission_ids()
    assert not (tmp_path / "never.txt").exists()
