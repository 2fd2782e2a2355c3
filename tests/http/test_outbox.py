"""The outbox on its own: numbering, replay after Last-Event-ID, bounds, one follower."""

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.http.config import HttpConfig
from adapters.http.connection import HttpConnection
from adapters.http.outbox import EventTooLarge, LastEventIdAhead, Outbox
from adapters.protocol.connection import Connection, Dispatcher
from tests.support.updates import text_chunk


def make(max_events: int = 100, max_bytes: int = 1 << 20) -> tuple[Outbox, list[str]]:
    failures: list[str] = []
    return Outbox(max_events=max_events, max_bytes=max_bytes, on_failure=failures.append), failures


def note(n: int) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "tick", "params": {"n": n}}


def ids(chunk: bytes) -> list[int]:
    return [int(i) for i in re.findall(rb"^id: (\d+)$", chunk, re.MULTILINE)]


async def pull(stream: AsyncIterator[bytes]) -> bytes:
    return await asyncio.wait_for(anext(stream), 1)


async def written(stream: AsyncIterator[bytes]) -> "asyncio.Future[bytes]":
    """Resume the stream after its last chunk (as the server does once it is written), and
    return the pending pull of the next one."""
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    return waiting


async def test_events_are_numbered_from_one_and_framed_as_message_events() -> None:
    outbox, _ = make()
    outbox.append(note(0))
    outbox.append(note(1))
    chunk = await pull(outbox.follow(None))
    assert chunk == (
        b'id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"tick","params":{"n":0}}\n\n'
        b'id: 2\nevent: message\ndata: {"jsonrpc":"2.0","method":"tick","params":{"n":1}}\n\n'
    )


async def test_a_follower_waits_for_new_events() -> None:
    outbox, _ = make()
    stream = outbox.follow(None)
    waiting = asyncio.ensure_future(pull(stream))
    await asyncio.sleep(0)
    assert not waiting.done()
    outbox.append(note(0))
    assert ids(await waiting) == [1]


async def test_without_last_event_id_a_stream_starts_after_what_was_written() -> None:
    outbox, _ = make()
    outbox.append(note(0))
    first = outbox.follow(None)
    assert ids(await pull(first)) == [1]
    await written(first)
    outbox.append(note(1))
    second = outbox.follow(None)
    assert ids(await pull(second)) == [2]


async def test_last_event_id_replays_exactly_what_follows_it() -> None:
    outbox, _ = make()
    for n in range(5):
        outbox.append(note(n))
    first = outbox.follow(None)
    assert ids(await pull(first)) == [1, 2, 3, 4, 5]
    resumed = outbox.follow(2)  # the client saw up to 2: 3..5 were lost in flight
    assert ids(await pull(resumed)) == [3, 4, 5]
    assert outbox.kept[0] == 3  # 1 and 2 were acknowledged and freed


async def test_a_new_stream_supersedes_the_old_one() -> None:
    outbox, _ = make()
    old = outbox.follow(None)
    waiting = asyncio.ensure_future(pull(old))
    await asyncio.sleep(0)
    new = outbox.follow(None)
    with pytest.raises(StopAsyncIteration):
        await waiting
    outbox.append(note(0))
    assert ids(await pull(new)) == [1]


async def test_written_events_are_evicted_to_make_room() -> None:
    outbox, failures = make(max_events=3)
    stream = outbox.follow(None)
    for n in range(3):
        outbox.append(note(n))
    assert ids(await pull(stream)) == [1, 2, 3]
    waiting = await written(stream)
    outbox.append(note(3))
    outbox.append(note(4))
    assert ids(await waiting) == [4, 5]
    assert failures == []
    assert outbox.kept[0] == 3


async def test_overflow_of_unwritten_events_fails_with_an_error_event() -> None:
    outbox, failures = make(max_events=3)
    for n in range(4):
        outbox.append(note(n))
    assert failures and "fell more than 3 events" in failures[0]
    chunk = await pull(outbox.follow(None))
    assert chunk.startswith(b"event: error\ndata: ")
    assert b'"code": "buffer_overflow"' in chunk
    assert outbox.kept == (0, 0)
    outbox.append(note(9))  # ignored from now on
    assert outbox.kept == (0, 0)


async def test_the_byte_bound_counts_too() -> None:
    outbox, failures = make(max_bytes=200)
    outbox.append({"jsonrpc": "2.0", "method": "big", "params": {"x": "y" * 300}})
    assert failures


async def test_a_last_event_id_older_than_the_buffer_fails_the_connection() -> None:
    outbox, failures = make(max_events=2)
    stream = outbox.follow(None)
    outbox.append(note(0))
    outbox.append(note(1))
    await pull(stream)
    waiting = await written(stream)
    outbox.append(note(2))  # evicts 1
    await waiting
    chunk = await pull(outbox.follow(0))
    assert b'"code": "replay_unavailable"' in chunk
    assert failures


async def test_a_last_event_id_ahead_of_the_connection_is_refused() -> None:
    outbox, _ = make()
    outbox.append(note(0))
    with pytest.raises(LastEventIdAhead):
        outbox.follow(7)


async def test_close_lets_the_stream_drain_then_end() -> None:
    outbox, _ = make()
    stream = outbox.follow(None)
    outbox.append(note(0))
    outbox.close()
    assert ids(await pull(stream)) == [1]
    with pytest.raises(StopAsyncIteration):
        await pull(stream)


def make_capped(max_event_bytes: int) -> tuple[Outbox, list[str]]:
    failures: list[str] = []
    outbox = Outbox(
        max_events=100,
        max_bytes=1 << 20,
        max_event_bytes=max_event_bytes,
        on_failure=failures.append,
    )
    return outbox, failures


def events(chunk: bytes) -> list[tuple[int, str, dict[str, object]]]:
    """(id, event name, data) of each frame of a chunk."""
    found = re.findall(rb"^id: (\d+)\nevent: (\w+)\ndata: (.*)$", chunk, re.MULTILINE)
    return [(int(i), name.decode(), json.loads(data)) for i, name, data in found]


async def test_finding_4_an_event_over_the_cap_never_kills_the_connection() -> None:
    """A response too large for one event is answered with a JSON-RPC error under the same
    id; a notification becomes a numbered `error` event naming it; the connection goes on."""
    outbox, failures = make_capped(2_000)
    outbox.append({"jsonrpc": "2.0", "id": 7, "result": {"text": "x" * 5_000}})
    outbox.append({"jsonrpc": "2.0", "method": "session/update", "params": {"p": "y" * 5_000}})
    outbox.append(note(2))
    got = events(await pull(outbox.follow(None)))
    assert failures == [] and outbox.failure is None
    assert [(n, name) for n, name, _ in got] == [(1, "message"), (2, "error"), (3, "message")]
    response, dropped, after = (data for _, _, data in got)
    assert response["id"] == 7 and response["error"]["code"] == -32603  # type: ignore[index]
    assert "over the limit of 2000 bytes" in response["error"]["message"]  # type: ignore[index]
    assert dropped["error"]["code"] == "event_too_large"  # type: ignore[index]
    assert dropped["error"]["method"] == "session/update"  # type: ignore[index]
    assert after == note(2)


async def test_finding_4_an_agent_request_over_the_cap_fails_its_caller_and_tells_the_client() -> (
    None
):
    outbox, failures = make_capped(2_000)
    big = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": {"d": "z" * 5_000},
    }
    with pytest.raises(EventTooLarge, match="session/request_permission"):
        outbox.append(big)
    [(number, name, data)] = events(await pull(outbox.follow(None)))
    assert (number, name, failures) == (1, "error", [])
    assert data["error"]["id"] == 0  # type: ignore[index]


def test_finding_4_the_event_cap_never_exceeds_the_buffer() -> None:
    from bootstrap.http_settings import load_http_config

    assert load_http_config({}).max_event_bytes == 10 * 2**20
    capped = load_http_config({"IAC_CODE_HTTP_BUFFER_BYTES": "1000"})
    assert capped.max_event_bytes == 1000


async def test_a_sender_goes_at_the_pace_of_a_stream_that_reads() -> None:
    """Ten buffers' worth of events reach a stream that reads one chunk at a time: senders
    wait for room instead of overflowing (a long replay, e.g. a history with images)."""
    outbox, failures = make(max_events=20, max_bytes=4_000)
    stream = outbox.follow(None)
    received: list[int] = []

    async def produce() -> None:
        for n in range(200):
            await outbox.room(patience=5)
            outbox.append(note(n))
        outbox.close()

    producer = asyncio.ensure_future(produce())
    async for chunk in stream:
        received.extend(ids(chunk))
    await producer
    assert failures == []
    assert received == list(range(1, 201))


async def test_a_stream_that_stops_reading_holds_senders_only_for_the_patience() -> None:
    outbox, failures = make(max_events=4)
    stream = outbox.follow(None)
    outbox.append(note(0))
    await pull(stream)  # written; the stream now waits to be resumed, reading nothing more
    for n in range(1, 4):
        outbox.append(note(n))
    await asyncio.wait_for(outbox.room(patience=0.05), 5)  # gives up waiting, does not hang
    # Stalled: later senders do not wait for it again (until it writes something).
    await asyncio.wait_for(outbox.room(patience=60), 1)
    outbox.append(note(4))
    outbox.append(note(5))
    assert failures and "fell more than 4 events" in failures[0]


async def test_without_a_stream_nobody_waits() -> None:
    outbox, _ = make(max_events=4)
    for n in range(3):
        outbox.append(note(n))
    await asyncio.wait_for(outbox.room(patience=60), 1)


async def test_a_connections_notifications_wait_for_its_stream() -> None:
    """Through the connection: a burst of notifications several times the buffer reaches a
    stream that reads only now and then, where it used to overflow the buffer."""
    failures: list[object] = []
    config = HttpConfig(buffer_max_events=8, buffer_max_bytes=1 << 20)
    connection = HttpConnection("c1", _Nobody(), config, failures.append, lambda: 0.0)
    stream = connection.follow(None, b"")
    await anext(stream)  # the stream's first frame
    received: list[int] = []

    async def burst() -> None:
        for n in range(60):
            await connection.protocol.send_notification("tick", {"n": n})
        connection.outbox.close()

    producer = asyncio.ensure_future(burst())
    async for chunk in stream:
        received.extend(ids(chunk))
        for _ in range(5):  # a slow reader: the sender runs several steps per chunk
            await asyncio.sleep(0)
    await producer
    assert failures == []
    assert received == list(range(1, 61))


class _Nobody(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        raise AssertionError("no requests here")

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        raise AssertionError("no notifications here")

    async def peer_closed(self, peer: Connection) -> None:
        pass


def texts(chunk: bytes) -> list[str]:
    return [
        json.loads(line[len(b"data: ") :])["params"]["update"]["content"]["text"]
        for line in chunk.splitlines()
        if line.startswith(b"data: ")
    ]


async def test_chunks_waiting_for_a_stream_are_merged_under_one_number() -> None:
    outbox, _ = make()
    for piece in "Hello":
        outbox.append(text_chunk(piece))
    outbox.append(text_chunk("!", message="m2"))

    chunk = await pull(outbox.follow(None))

    assert ids(chunk) == [1, 2]
    assert texts(chunk) == ["Hello", "!"]
    assert outbox.kept[0] == 2


async def test_a_chunk_a_stream_has_taken_is_never_changed() -> None:
    outbox, _ = make()
    outbox.append(text_chunk("a"))
    stream = outbox.follow(None)
    first = await pull(stream)
    outbox.append(text_chunk("b"))  # the first is being written: this one stays apart
    outbox.append(text_chunk("c"))  # but it may absorb this one

    second = await pull(stream)
    replay = await pull(outbox.follow(0))

    assert (ids(first), texts(first)) == ([1], ["a"])
    assert (ids(second), texts(second)) == ([2], ["bc"])
    assert replay == first + second  # a replay re-sends exactly what was sent
