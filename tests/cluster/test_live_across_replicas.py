"""A session followed from several replicas on PostgreSQL (issue 32): a client attached on
one replica receives the updates of a turn another replica runs, the same ones in the same
order with the same `seq`; and when the replica running a turn is killed, the clients on
the others are told the turn ended and go on with the session.

Every client goes through nginx; `open_on_each` places them on chosen replicas."""

import asyncio
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.conftest import database_kind
from tests.cluster.test_cluster import (
    new_session,
    open_on_each,
    prompt,
    until,
    until_not_busy,
)
from tests.support.cluster import AcpClient, Cluster, running_cluster, text_of

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        database_kind() != "postgres", reason="replicas signal each other through PostgreSQL"
    ),
]

LEASE_SECONDS = 5  # not 2: a live replica whose renewal came late lost its own turn


@pytest.fixture
def cluster3(nginx: str, tmp_path: Path, database_url: str) -> Iterator[Cluster]:
    # ~100 demo tokens at 25 a second: a turn lasts seconds, long enough to attach to.
    env = {"IAC_CODE_LEASE_SECONDS": str(LEASE_SECONDS), "IAC_CODE_DEMO_PACE": "25"}
    with running_cluster(nginx, tmp_path, database_url, replicas=3, env=env) as running:
        yield running


def seq(update: dict[str, Any]) -> int | None:
    found = update.get("_meta", {}).get("iac_code", {}).get("seq")
    return found if isinstance(found, int) else None


def normalised(update: dict[str, Any]) -> dict[str, Any]:
    """The update without what differs per client: the turn state told to a new one."""
    update = copy.deepcopy(update)
    ours = update.get("_meta", {}).get("iac_code", {})
    ours.pop("turn", None)
    return update


def chunk_text(update: dict[str, Any]) -> str | None:
    body = update["update"]
    if body.get("sessionUpdate") not in ("agent_message_chunk", "agent_thought_chunk"):
        return None
    return str(body["content"].get("text", ""))


def assert_same_updates(followed: list[dict[str, Any]], sent: list[dict[str, Any]]) -> None:
    """Each update the follower got stands for the sender's updates numbered after its
    previous one up to its own: that one alone, or text chunks of one message joined. (Its
    first may stand for some before it too: where it joined is known only by its text.)"""
    upto = [u for u in sent if (seq(u) or 0) <= (seq(followed[0]) or 0)]
    rest = [u for u in sent if (seq(u) or 0) > (seq(followed[0]) or 0)]
    first = chunk_text(followed[0])
    joined = ["".join(chunk_text(u) or "" for u in upto[k:]) for k in range(len(upto))]
    # The fewest of the sender's last updates that make it (one, unless merged chunks).
    k = next((k for k in reversed(range(len(upto))) if joined[k] == first), len(upto) - 1)
    upto = upto[k:]
    for n, update in enumerate(followed):
        if n:
            upto = [u for u in rest if (seq(u) or 0) <= (seq(update) or 0)]
            rest = rest[len(upto) :]
        assert upto and seq(upto[-1]) == seq(update), (update, upto)
        if len(upto) == 1:
            assert normalised(update) == normalised(upto[0])
            continue
        texts = [chunk_text(u) for u in upto]
        assert None not in texts, (update, upto)
        assert chunk_text(update) == "".join(t or "" for t in texts)
        assert {u["update"]["messageId"] for u in upto} == {update["update"]["messageId"]}
    assert not rest, rest


def numbered(updates: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionId"] == session_id and seq(u) is not None]


async def attach_mid_turn(client: AcpClient, session_id: str, cwd: Path) -> int:
    """session/load while the turn runs elsewhere: how many updates it had before."""
    mark = len(client.updates)
    params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
    response = await until_not_busy(lambda: client.call("session/load", params))
    assert "result" in response, response
    return mark


async def test_a_client_on_another_replica_follows_a_running_turn_update_for_update(
    cluster3: Cluster, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    runner, follower, _ = await open_on_each(cluster3, http, per_replica=1)
    assert cluster3.replica_of(runner.id or "") is not cluster3.replica_of(follower.id or "")
    session = await new_session(runner, tmp_path)
    turn = asyncio.create_task(runner.call("session/prompt", prompt(session.id, "count slowly")))
    await until(lambda: text_of(runner.updates, "agent_message_chunk"), "the turn streaming")

    mark = await attach_mid_turn(follower, session.id, tmp_path)
    answer = await turn
    assert answer["result"]["stopReason"] == "end_turn", answer

    sent = numbered(runner.updates, session.id)
    last = seq(sent[-1])
    await until(
        lambda: any(seq(u) == last for u in numbered(follower.updates, session.id)),
        "the follower reaching the turn's last update",
    )
    followed = numbered(follower.updates[mark:], session.id)
    first = seq(followed[0])
    assert first is not None and first < last, "the follower saw none of the turn live"
    # From where it joined: the same updates, in the same order, with the same numbers
    # (text chunks that waited side by side for it may arrive merged, as for any client).
    assert_same_updates(followed, sent)
    # Its first update after the load told it the turn was running (on another replica).
    told = follower.updates[mark]["_meta"]["iac_code"]["turn"]
    assert told["state"] == "running", follower.updates[mark]
    await asyncio.sleep(0.5)  # nothing more arrives after the last one: no duplicate
    assert len(numbered(follower.updates[mark:], session.id)) == len(followed)
    for client in (runner, follower):
        await client.close()


async def test_clients_on_two_replicas_see_the_killed_replicas_turn_end_and_go_on(
    cluster3: Cluster, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    runner, *followers = await open_on_each(cluster3, http, per_replica=1)
    victim = cluster3.replica_of(runner.id or "")
    session = await new_session(runner, tmp_path)
    turn = asyncio.create_task(runner.call("session/prompt", prompt(session.id, "long one")))
    await until(lambda: text_of(runner.updates, "agent_message_chunk"), "the turn streaming")
    marks = [await attach_mid_turn(f, session.id, tmp_path) for f in followers]
    await until(
        lambda: all(
            text_of(f.updates[m:], "agent_message_chunk", session.id)
            for f, m in zip(followers, marks, strict=True)
        ),
        "both followers receiving the turn live",
    )
    assert not turn.done()
    victim.kill()
    await asyncio.gather(turn, return_exceptions=True)

    def told_interrupted(client: AcpClient, mark: int) -> bool:
        return "server running this turn stopped" in text_of(
            client.updates[mark:], "agent_message_chunk", session.id
        )

    for follower, mark in zip(followers, marks, strict=True):
        await until(lambda f=follower, m=mark: told_interrupted(f, m), "the turn told ended")
    # Told once each, with one number both share.
    notices = [
        [u for u in numbered(f.updates[m:], session.id) if "stopped" in str(u)]
        for f, m in zip(followers, marks, strict=True)
    ]
    assert [len(n) for n in notices] == [1, 1], notices
    assert seq(notices[0][0]) == seq(notices[1][0])

    # The session is usable on a live replica at once: the next prompt runs there.
    answer = await until_not_busy(
        lambda: followers[0].call("session/prompt", prompt(session.id, "after the kill"))
    )
    assert answer["result"]["stopReason"] == "end_turn", answer
    # And the other follower saw that turn too, live.
    await until(
        lambda: "after the kill" in text_of(followers[1].updates, "agent_message_chunk"),
        "the other follower seeing the next turn",
    )
    for client in followers:
        await client.close()
