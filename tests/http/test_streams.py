"""The SSE stream: framing, keepalives, queueing, replay, takeover, bounds, isolation,
agent→client requests and DELETE (reaping: test_reaping.py), against a real uvicorn server."""

import asyncio
from typing import Any

import httpx
import pytest

from adapters.http.app import create_app
from tests.http.conftest import (
    FAST,
    AcpHttp,
    FakeAgent,
    Serve,
    always_ready,
    message_events,
    start,
)
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration


def tick_numbers(messages: list[dict[str, Any]]) -> list[int]:
    return [m["params"]["n"] for m in messages if m.get("method") == "tick"]


async def connect(http: httpx.AsyncClient, base: str) -> AcpHttp:
    client = AcpHttp(http, f"{base}/acp")
    await client.initialize()
    return client


async def test_events_are_numbered_message_events_after_a_retry_field(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            assert stream.response.status_code == 200
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            assert stream.response.headers["acp-connection-id"] == client.id
            request_id = await client.request("stream", {"count": 3})
            events = await stream.until(lambda e: e.json().get("id") == request_id)
    assert stream.retry == 1500
    assert [e.event for e in events] == ["message"] * 4
    assert [e.id for e in events] == ["1", "2", "3", "4"]
    messages = message_events(events)
    assert tick_numbers(messages) == [0, 1, 2]
    assert messages[-1] == {"jsonrpc": "2.0", "id": request_id, "result": {"sent": 3}}


async def test_an_idle_stream_gets_keepalive_comments(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(keepalive_seconds=0.05) as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            await asyncio.sleep(0.3)
            request_id = await client.request("echo", {})
            await stream.until(lambda e: e.json().get("id") == request_id)
    assert stream.comments.count("keepalive") >= 2


async def test_messages_sent_while_no_stream_is_open_are_queued(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        first = await client.request("echo", {"a": 1})
        second = await client.request("stream", {"count": 2})
        await asyncio.sleep(0.05)
        async with client.stream() as stream:
            events = await stream.until(lambda e: e.json().get("id") == second)
    messages = message_events(events)
    assert messages[0] == {"jsonrpc": "2.0", "id": first, "result": {"a": 1}}
    assert tick_numbers(messages) == [0, 1]
    assert [e.id for e in events] == ["1", "2", "3", "4"]


async def test_a_reconnect_with_last_event_id_gets_the_missed_events_exactly_once(
    serve_fake: Serve, http: httpx.AsyncClient, fake_agent: FakeAgent
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            request_id = await client.request("stream", {"count": 12, "gate": 6})
            seen = await stream.take(3)  # ticks 0..2; 3..5 are sent after we stop reading
            await fake_agent.started.wait()
        fake_agent.release.set()  # the rest is produced while no stream is open
        await asyncio.sleep(0.05)
        async with client.stream(last_event_id=seen[-1].id) as again:
            resumed = await again.until(lambda e: e.json().get("id") == request_id)
    all_ids = [int(e.id or 0) for e in seen + resumed]
    assert all_ids == list(range(1, 14))
    assert tick_numbers(message_events(seen + resumed)) == list(range(12))


async def test_a_new_stream_takes_over_and_the_old_one_is_closed(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        async with client.stream() as old:
            first = await client.request("echo", {"n": 1})
            await old.until(lambda e: e.json().get("id") == first)
            async with client.stream() as new:
                assert await old.rest() == []  # ended by the server
                second = await client.request("echo", {"n": 2})
                events = await new.until(lambda e: e.json().get("id") == second)
    assert [e.id for e in events] == ["2"]


async def test_a_client_far_behind_gets_an_error_event_and_the_connection_closes(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    pad = "x" * 64_000
    # The agent waits for a stream that writes nothing only this long, then overflows it.
    async with serve_fake(buffer_max_bytes=1_000_000, sender_patience_seconds=0.1) as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            await stream.take(0)
            await client.request("stream", {"count": 400, "pad": pad})  # ~25 MB, never read
            await asyncio.sleep(0.5)
            events = await stream.rest()
        later = await client.post({"jsonrpc": "2.0", "id": 9, "method": "echo"})
    *messages, error = events
    assert [int(e.id or 0) for e in messages] == list(range(1, len(messages) + 1))
    assert error.event == "error"
    assert error.json()["error"]["code"] == "buffer_overflow"
    assert error.json()["error"]["lastEventId"] > len(messages)
    assert later.status_code == 400
    assert "fell more than" in later.json()["error"]


async def test_a_replay_from_before_the_buffer_is_refused_with_an_error_event(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(buffer_max_events=3) as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            for n in range(6):  # read as they come: written events make room for new ones
                request_id = await client.request("echo", {"n": n})
                await stream.until(lambda e, i=request_id: e.json().get("id") == i)
        async with client.stream(last_event_id=1) as again:
            events = await again.rest()
        later = await client.post({"jsonrpc": "2.0", "id": 9, "method": "echo"})
    assert [e.event for e in events] == ["error"]
    assert events[0].json()["error"]["code"] == "replay_unavailable"
    assert later.status_code == 400


@pytest.mark.parametrize(("last_event_id", "needle"), [("5", "ahead"), ("abc", "must be")])
async def test_a_bad_last_event_id_is_400(
    serve_fake: Serve, http: httpx.AsyncClient, last_event_id: str, needle: str
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        response = await http.get(
            client.url,
            headers={"Acp-Connection-Id": client.id or "", "Last-Event-ID": last_event_id},
        )
    assert response.status_code == 400
    assert needle in response.json()["error"]


async def test_two_connections_never_see_each_others_events(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        alice, bob = await connect(http, base), await connect(http, base)
        async with alice.stream() as alice_stream, bob.stream() as bob_stream:
            a = await alice.request("stream", {"count": 2, "pad": "alice"})
            b = await bob.request("stream", {"count": 3, "pad": "bob"})
            alice_events = await alice_stream.until(lambda e: e.json().get("id") == a)
            bob_events = await bob_stream.until(lambda e: e.json().get("id") == b)
    assert {m["params"]["pad"] for m in message_events(alice_events)[:-1]} == {"alice"}
    assert {m["params"]["pad"] for m in message_events(bob_events)[:-1]} == {"bob"}
    assert [e.id for e in alice_events] == ["1", "2", "3"]
    assert [e.id for e in bob_events] == ["1", "2", "3", "4"]


async def test_an_agent_request_is_answered_by_a_post(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            request_id = await client.request("ask", {"tool": "write_file"})
            asked = (await stream.next()).json()
            answer = {"outcome": {"outcome": "selected", "optionId": "allow"}}
            posted = await client.post({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
            reply = (await stream.next()).json()
    assert asked["method"] == "session/request_permission"
    assert asked["params"]["toolCall"]["rawInput"] == {"tool": "write_file"}
    assert posted.status_code == 202
    assert reply == {"jsonrpc": "2.0", "id": request_id, "result": answer}


async def test_delete_cancels_running_calls_then_ends_the_stream(
    serve_fake: Serve, http: httpx.AsyncClient, fake_agent: FakeAgent
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        async with client.stream() as stream:
            await client.request("hang")
            await asyncio.wait_for(fake_agent.started.wait(), PATIENCE)
            deleted = await client.delete()
            assert fake_agent.cancelled.is_set()
            rest = await stream.rest()
    assert deleted.status_code == 200
    assert len(fake_agent.closed_peers) == 1
    assert [e.json() for e in rest] == [  # what was sent meanwhile still arrives
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}
    ]


async def test_session_streams_stay_open_but_events_keep_to_the_connection_stream(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake() as base:
        client = await connect(http, base)
        unknown = await http.get(
            client.url, headers={"Acp-Connection-Id": client.id or "", "Acp-Session-Id": "s1"}
        )
        async with client.stream() as stream:
            minted = await client.request("echo", {"sessionId": "s1"})
            await stream.until(lambda e: e.json().get("id") == minted)
            async with client.stream(Acp_Session_Id="s1") as session_stream:
                assert session_stream.response.status_code == 200
                request_id = await client.request("stream", {"count": 2})
                events = await stream.until(lambda e: e.json().get("id") == request_id)
                assert (await client.delete()).status_code == 200
                assert await session_stream.rest() == []
    assert unknown.status_code == 404
    assert [e.id for e in events] == ["2", "3", "4"]
    assert session_stream.comments[0].startswith("session stream")


async def test_stopping_the_server_ends_open_streams_cleanly(
    fake_agent: FakeAgent, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    server, task, base = await start(create_app(fake_agent, FAST, always_ready))
    client = await connect(http, base)
    async with client.stream() as stream:
        request_id = await client.request("hang")
        await asyncio.wait_for(fake_agent.started.wait(), PATIENCE)
        server.should_exit = True
        rest = await stream.rest()
    await asyncio.wait_for(task, PATIENCE)
    assert fake_agent.cancelled.is_set()
    assert [e.json() for e in rest] == [  # the cancelled call's answer, then a clean end
        {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "cancelled"}}
    ]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
