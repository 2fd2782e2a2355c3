"""Two replicas on one database behind nginx (deploy/nginx's configuration), on loopback:
connections stick to the replica that opened them, sessions move between replicas, and when
one replica is killed mid-turn every session goes on on the other with no finished turn lost.

Every request goes through nginx with the bearer token, as a deployment's clients would."""

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.http import create_http_stream
from acp.schema import ClientCapabilities, Implementation
from acp.ws import create_websocket_stream

from tests.e2e.conftest import RecordingClient
from tests.support.cluster import (
    AcpClient,
    Cluster,
    ConnectionLost,
    is_busy,
    running_cluster,
    text_of,
)

pytestmark = pytest.mark.cluster

LEASE_SECONDS = 5  # a dead replica's lease lapses this long after its last renewal (2 s was
# short enough for a live replica, its renewal late on a loaded machine, to lose its own turn)
DEADLINE = 60.0  # for anything polled: far above a lease, a turn and a start


@pytest.fixture
def cluster(nginx: str, tmp_path: Path, database_url: str) -> Iterator[Cluster]:
    # ~100 demo tokens a reply at 25 a second: a turn lasts seconds, long enough to be
    # killed in the middle of.
    env = {"IAC_CODE_LEASE_SECONDS": str(LEASE_SECONDS), "IAC_CODE_DEMO_PACE": "25"}
    with running_cluster(nginx, tmp_path, database_url, replicas=2, env=env) as running:
        yield running


@dataclass
class Session:
    """A session as its user saw it: the turns that finished, what was said and answered."""

    id: str
    turns: list[tuple[str, str]] = field(default_factory=list)


def prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


TAKES_NOTICES = {"session": {"notices": {}}}  # clientCapabilities that take notices


async def open_client(
    cluster: Cluster, http: httpx.AsyncClient, capabilities: dict[str, Any] | None = None
) -> AcpClient:
    client = AcpClient(http, cluster.url, cluster.token, capabilities=capabilities or {})
    await client.open()
    return client


async def open_on_each(
    cluster: Cluster, http: httpx.AsyncClient, per_replica: int
) -> list[AcpClient]:
    """Connections through nginx until each replica holds `per_replica` of them (nginx deals
    `initialize`s round-robin, so a few more than needed at most); the extra ones closed."""
    kept: list[AcpClient] = []
    for _ in range(4 * per_replica * len(cluster.replicas)):
        client = await open_client(cluster, http)
        held = [
            c for c in kept if cluster.replica_of(c.id or "") is cluster.replica_of(client.id or "")
        ]
        if len(held) < per_replica:
            kept.append(client)
        else:
            await client.close()
        if len(kept) == per_replica * len(cluster.replicas):
            return kept
    raise AssertionError(f"nginx did not spread connections: {[c.id for c in kept]}")


async def new_session(client: AcpClient, cwd: Path) -> Session:
    response = await client.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return Session(response["result"]["sessionId"])


async def take_turn(client: AcpClient, session: Session, said: str) -> dict[str, Any]:
    """A prompt; when it ends with end_turn, the turn is kept as the user saw it."""
    mark = len(client.updates)
    response = await client.call("session/prompt", prompt(session.id, said))
    if response.get("result", {}).get("stopReason") == "end_turn":
        answered = text_of(client.updates[mark:], "agent_message_chunk", session.id)
        session.turns.append((said, answered))
    return response


async def until_not_busy(call: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """The call's answer once it is not the busy one (another replica's turn, or the lease
    of a dead one, holds the session), polled within the deadline."""
    deadline = time.monotonic() + DEADLINE
    while is_busy(response := await call()):
        assert time.monotonic() < deadline, response
        await asyncio.sleep(0.2)
    return response


async def load(client: AcpClient, session_id: str, cwd: Path) -> tuple[str, str]:
    """session/load (polled past the busy answer): the history it replays, as (user text,
    agent text)."""
    params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
    marks: list[int] = []

    async def call() -> dict[str, Any]:
        marks.append(len(client.updates))
        return await client.call("session/load", params)

    response = await until_not_busy(call)
    assert "result" in response, response
    replayed = client.updates[marks[-1] :]
    return (
        text_of(replayed, "user_message_chunk", session_id),
        text_of(replayed, "agent_message_chunk", session_id),
    )


def assert_history_holds(history: tuple[str, str], session: Session) -> None:
    user_text, agent_text = history
    for said, answered in session.turns:
        assert said in user_text, (said, user_text)
        assert answered and answered in agent_text, (answered, agent_text)


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_every_request_of_a_connection_reaches_the_replica_its_id_names(
    cluster: Cluster, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    async def converse(n: int) -> str:
        client = await open_client(cluster, http)
        session = await new_session(client, tmp_path)
        answer = await take_turn(client, session, f"hello from connection {n}")
        assert answer["result"]["stopReason"] == "end_turn", answer
        await client.close()
        return client.id or ""

    ids = await asyncio.gather(*(converse(n) for n in range(8)))

    assert {cluster.replica_of(i).id for i in ids} == {"r1", "r2"}  # initialize went to both
    # Each replica logs every request it served when it ends (a stream when it closes).
    for connection_id in ids:
        home = cluster.replica_of(connection_id)
        await until(
            lambda home=home, connection_id=connection_id: any(
                e["connection"] == connection_id and e["rpc"] == "stream" for e in home.requests()
            ),
            f"{connection_id}'s stream in {home.id}'s log",
        )
    for connection_id in ids:
        home = cluster.replica_of(connection_id)
        served = [e for e in home.requests() if e["connection"] == connection_id]
        assert {e["rpc"] for e in served} >= {"initialize", "session/new", "session/prompt"}
        assert {e["method"] for e in served} == {"POST", "GET", "DELETE"}
        for other in cluster.replicas.values():
            if other is not home:
                assert all(e["connection"] != connection_id for e in other.requests())
    # And as nginx saw it: every request with an id went to the replica the id names, and
    # the id each initialize got names the replica that answered it.
    upstreams = {r.upstream.address: r.id for r in cluster.replicas.values()}

    def routed() -> list[dict[str, str]]:
        return [e for e in cluster.nginx.requests() if e["sent"] or e["given"]]

    # nginx too logs a stream when it ends, around when the replica does.
    await until(lambda: len(routed()) >= 5 * len(ids), "initialize, new, prompt, stream, delete")
    for entry in routed():
        named = entry["sent"] or entry["given"]
        assert upstreams[entry["upstream"]] == cluster.replica_of(named).id, entry


async def test_the_official_client_works_through_the_balancer(
    cluster: Cluster, tmp_path: Path
) -> None:
    # The SDK's transport also opens a GET per session (Acp-Session-Id): it carries the
    # connection id, so it reaches the same replica as the rest.
    recorder = RecordingClient()
    token = {"Authorization": f"Bearer {cluster.token}"}
    async with httpx.AsyncClient(timeout=httpx.Timeout(None)) as http:
        transport = create_http_stream(f"{cluster.url}/acp", client=http, headers=token)
        conn = connect_to_agent(recorder, transport)
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="sdk", version="1"),
            )
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            result = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("hello through nginx")]
            )
        finally:
            await conn.close()
            await transport.close()
    assert result.stop_reason == "end_turn"
    assert "You said: hello through nginx" in recorder.agent_text()

    [connection_id] = {e["given"] for e in cluster.nginx.requests() if e["given"]}
    home = cluster.replica_of(connection_id)

    def sent() -> list[dict[str, str]]:
        return [e for e in cluster.nginx.requests() if e["sent"] == connection_id]

    await until(
        lambda: any(e["session"] == session.session_id for e in sent()), "the session's stream"
    )
    assert {e["upstream"] for e in sent()} == {home.upstream.address}
    assert {e["method"] for e in sent()} >= {"POST", "GET"}


async def test_a_websocket_passes_through_the_balancer(cluster: Cluster, tmp_path: Path) -> None:
    # nginx passes the upgrade on (deploy/nginx's `Upgrade`/`Connection` headers); the whole
    # connection then lives on the one socket, so it needs no routing by id.
    recorder = RecordingClient()
    url = cluster.url.replace("http://", "ws://") + "/acp"
    token = {"Authorization": f"Bearer {cluster.token}"}
    transport = await create_websocket_stream(url, headers=token)
    conn = connect_to_agent(recorder, transport)
    try:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="sdk-ws", version="1"),
        )
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        result = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("hello over a websocket")]
        )
    finally:
        await conn.close()
        await transport.close()
    assert result.stop_reason == "end_turn"
    assert "You said: hello over a websocket" in recorder.agent_text()


async def test_a_session_made_on_one_replica_loads_and_prompts_on_the_other(
    cluster: Cluster, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    first, second = await open_on_each(cluster, http, per_replica=1)
    on_first, on_second = cluster.replica_of(first.id or ""), cluster.replica_of(second.id or "")
    assert on_first is not on_second

    session = await new_session(first, tmp_path)
    answer = await take_turn(first, session, "first, on one replica")
    assert answer["result"]["stopReason"] == "end_turn", answer
    await first.close()

    assert_history_holds(await load(second, session.id, tmp_path), session)
    answer = await until_not_busy(lambda: take_turn(second, session, "then on the other"))
    assert answer["result"]["stopReason"] == "end_turn", answer
    await second.close()

    # Back on the first replica, on a new connection: both turns are there.
    both = await open_on_each(cluster, http, per_replica=1)
    again = next(c for c in both if cluster.replica_of(c.id or "") is on_first)
    assert len(session.turns) == 2
    assert_history_holds(await load(again, session.id, tmp_path), session)
    for client in both:
        await client.close()


async def test_every_session_goes_on_on_the_survivor_when_a_replica_dies_mid_turn(
    cluster: Cluster, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    clients = await open_on_each(cluster, http, per_replica=3)
    sessions = [await new_session(c, tmp_path) for c in clients]
    victim, survivor = cluster.replicas["r1"], cluster.replicas["r2"]
    on_victim = [cluster.replica_of(c.id or "") is victim for c in clients]

    # Turn 1 finishes everywhere.
    answers = await asyncio.gather(
        *(take_turn(c, s, f"turn one of {s.id}") for c, s in zip(clients, sessions, strict=True))
    )
    assert all(a["result"]["stopReason"] == "end_turn" for a in answers), answers

    # Turn 2 starts everywhere; once every one streams, the victim is killed mid-turn.
    marks = [len(c.updates) for c in clients]
    turns = [
        asyncio.create_task(take_turn(c, s, f"turn two of {s.id}"))
        for c, s in zip(clients, sessions, strict=True)
    ]
    await until(
        lambda: all(
            text_of(c.updates[m:], "agent_message_chunk")
            for c, m in zip(clients, marks, strict=True)
        ),
        "every turn two streaming",
    )
    assert not any(t.done() for t, dead in zip(turns, on_victim, strict=True) if dead)
    victim.kill()

    async def go_on(client: AcpClient, session: Session, turn: Any, dead: bool) -> None:
        """The session's turn two ends, then it goes on on a new connection. A killed turn
        ends at once (its stream broke), so its session goes on while the dead replica's
        lease may still hold it: load and prompt wait out the busy answer."""
        outcome = (await asyncio.gather(turn, return_exceptions=True))[0]
        if dead:
            assert isinstance(outcome, ConnectionLost), outcome
        else:  # the survivor's turns never noticed
            assert isinstance(outcome, dict) and outcome["result"]["stopReason"] == "end_turn"
        await client.close()
        # Through nginx: the survivor answers. A client that takes notices: the one
        # telling that the dead replica's turn ended is no turn's text, though it may
        # arrive after turn three's prompt was sent (the agent-text fallback clients that
        # do not take notices get is test_live_across_replicas.py's).
        again = await open_client(cluster, http, TAKES_NOTICES)
        assert cluster.replica_of(again.id or "") is survivor
        assert_history_holds(await load(again, session.id, tmp_path), session)
        answer = await until_not_busy(lambda: take_turn(again, session, "turn three"))
        assert answer["result"]["stopReason"] == "end_turn", answer
        await again.close()

    await asyncio.gather(
        *(go_on(*each) for each in zip(clients, sessions, turns, on_victim, strict=True))
    )

    # Every turn that finished, before the kill or after it, is in every session's history.
    reader = await open_client(cluster, http)
    for session, dead in zip(sessions, on_victim, strict=True):
        assert len(session.turns) == (2 if dead else 3)  # the killed turn two never finished
        assert_history_holds(await load(reader, session.id, tmp_path), session)
    await reader.close()
    assert "Traceback" not in survivor.log.read_text()


async def test_bodies_up_to_the_replicas_limit_pass_and_larger_ones_are_refused(
    cluster: Cluster, http: httpx.AsyncClient
) -> None:
    # nginx's client_max_body_size equals the replicas' limit (10 MiB): a body nginx lets
    # through (kept in its temporary files on the way) is one the replica takes.
    client = await open_client(cluster, http)
    limit = 10 * 2**20
    headers = {"Authorization": f"Bearer {cluster.token}", "Acp-Connection-Id": client.id or ""}

    def notification(size: int) -> bytes:
        head, tail = b'{"jsonrpc":"2.0","method":"_pad","params":{"pad":"', b'"}}'
        return head + b"x" * (size - len(head) - len(tail)) + tail

    posts = [
        await http.post(
            f"{cluster.url}/acp",
            content=notification(size),
            headers={**headers, "Content-Type": "application/json"},
        )
        for size in (limit, limit + 1)
    ]
    await client.close()
    assert [p.status_code for p in posts] == [202, 413]


async def test_a_page_of_the_balancers_own_origin_is_served_and_another_port_refused(
    cluster: Cluster, http: httpx.AsyncClient
) -> None:
    # The replicas compare Origin with the Host they are given: nginx must pass the client's
    # Host as sent, port included ($http_host), or a page served on the balancer's address
    # (not on port 80) would be refused as cross-origin.
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    auth = {"Authorization": f"Bearer {cluster.token}"}
    other = cluster.url.rsplit(":", 1)[0] + ":1"
    own, foreign = [
        await http.post(f"{cluster.url}/acp", json=init, headers={**auth, "Origin": origin})
        for origin in (cluster.url, other)
    ]
    assert own.status_code == 200, own.text
    assert foreign.status_code == 403, foreign.text
