"""The outbox's merging under random interleavings of sends, reads and reconnections,
against what a client applying the unmerged messages would see."""

import asyncio
import json
import re
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.http.outbox import Outbox
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.fuzz

FRAME = re.compile(rb"^id: (\d+)\nevent: message\ndata: (.*)\n\n", re.MULTILINE)


def notification(session: str, update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


chunks = st.builds(
    lambda session, kind, message, text: notification(
        session,
        {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": message},
    ),
    st.sampled_from(["s1", "s1", "s1", "s2"]),  # mostly alike: so that merges happen
    st.sampled_from(["agent_message_chunk", "agent_message_chunk", "agent_thought_chunk"]),
    st.sampled_from(["m1", "m1", "m1", "m2"]),
    st.text(min_size=1, max_size=3),
)
tool_updates = st.builds(
    lambda session, call, fields: notification(
        session, {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}
    ),
    st.sampled_from(["s1", "s1", "s2"]),
    st.sampled_from(["t1", "t1", "t2"]),
    st.fixed_dictionaries(
        {"status": st.sampled_from(["pending", "in_progress", "completed"])},
        optional={
            "title": st.text(max_size=3),
            "rawOutput": st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
        },
    ),
)
others = st.integers(0, 9).map(lambda n: {"jsonrpc": "2.0", "id": n, "result": {"n": n}})
MESSAGES = chunks | chunks | tool_updates | others
OPS = st.lists(
    st.tuples(st.just("send"), MESSAGES)
    | st.tuples(st.just("read"), st.none())
    | st.tuples(st.just("resume"), st.none())  # a new stream without Last-Event-ID
    | st.tuples(st.just("replay"), st.integers(min_value=0)),  # with a Last-Event-ID
    max_size=60,
)


def normal_form(messages: list[dict[str, Any]]) -> list[Any]:
    """What a client ends up with: adjacent chunks of one message joined, adjacent updates
    of one tool call applied one over the other, everything else as it came."""
    out: list[Any] = []
    for message in messages:
        update = message.get("params", {}).get("update", {})
        kind = update.get("sessionUpdate")
        session = message.get("params", {}).get("sessionId")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            key = (session, kind, update["messageId"])
            if out and out[-1][0] == key:
                out[-1] = (key, out[-1][1] + update["content"]["text"])
            else:
                out.append((key, update["content"]["text"]))
        elif kind == "tool_call_update":
            key = (session, kind, update["toolCallId"])
            if out and out[-1][0] == key:
                out[-1] = (key, {**out[-1][1], **update})
            else:
                out.append((key, update))
        else:
            out.append((None, message))
    return out


class Client:
    """Reads streams; remembers every event's bytes by number."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.seen: dict[int, bytes] = {}
        self.last = 0  # the newest event received
        self.acknowledged = 0
        self.stream: AsyncGenerator[bytes, None] = outbox.follow(None)
        self.cursor = 0  # the newest event the current stream has given

    async def read(self) -> None:
        if self.outbox.last_id <= self.cursor:
            return  # nothing to read: the stream would wait
        chunk = await asyncio.wait_for(anext(self.stream), PATIENCE)
        frames = FRAME.findall(chunk)
        assert b"".join(b"id: %s\nevent: message\ndata: %s\n\n" % f for f in frames) == chunk
        for raw_id, data in frames:
            event_id = int(raw_id)
            assert event_id == self.cursor + 1, "events arrive in order, none skipped"
            self.cursor = event_id
            frame = b"data: " + data
            assert self.seen.setdefault(event_id, frame) == frame, "a re-sent event changed"
            self.last = max(self.last, event_id)

    async def reconnect(self, last_event_id: int | None) -> None:
        await self.stream.aclose()
        self.stream = self.outbox.follow(last_event_id)
        if last_event_id is None:
            # The server resumes after what it knows was written (its own bookkeeping).
            self.cursor = self.outbox._written
        else:
            self.acknowledged = last_event_id
            self.cursor = last_event_id

    def applied(self) -> list[dict[str, Any]]:
        return [json.loads(self.seen[i][len(b"data: ") :]) for i in sorted(self.seen)]


def numbered(message: dict[str, Any], n: int) -> dict[str, Any]:
    """Each chunk's text made its own, so that a misplaced piece shows."""
    update = message.get("params", {}).get("update", {})
    if "content" not in update:
        return message
    update = {**update, "content": {"type": "text", "text": f"{update['content']['text']}{n}"}}
    return {**message, "params": {**message["params"], "update": update}}


async def run(ops: list[tuple[str, Any]]) -> None:
    failures: list[str] = []
    outbox = Outbox(max_events=10_000, max_bytes=1 << 24, on_failure=failures.append)
    client = Client(outbox)
    sent: list[dict[str, Any]] = []
    for op, arg in ops:
        if op == "send":
            sent.append(numbered(arg, len(sent)))
            outbox.append(sent[-1])
        elif op == "read":
            await client.read()
        elif op == "resume":
            await client.reconnect(None)
        else:
            span = client.last - client.acknowledged
            await client.reconnect(client.acknowledged + arg % (span + 1))
    while outbox.last_id > client.cursor:
        await client.read()

    assert failures == []
    assert sorted(client.seen) == list(range(1, outbox.last_id + 1))
    assert normal_form(client.applied()) == normal_form(sent)


@settings(max_examples=max(300, settings().max_examples))  # rare interleavings
@given(OPS)
def test_merging_never_changes_what_a_client_ends_up_with(ops: list[tuple[str, Any]]) -> None:
    asyncio.run(run(ops))
