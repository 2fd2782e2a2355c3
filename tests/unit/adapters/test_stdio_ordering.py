"""The stdio writer under concurrent senders and a client that reads in fits and starts:
what the client applies is what was sent, in the order it was sent."""

import asyncio
import io
import json
import os
import random
import threading
import time
from typing import Any

import pytest

from adapters.stdio import transport as stdio
from adapters.stdio.transport import StdioTransport


def update(session: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def random_message(rng: random.Random, n: int) -> dict[str, Any]:
    session = rng.choice(["s1", "s2"])
    match rng.randrange(4):
        case 0 | 1:
            kind = rng.choice(["agent_message_chunk", "agent_thought_chunk"])
            text = f"{n}" + "x" * rng.choice([0, 0, 0, 3000])  # some reach the merge cap
            body = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
            return update(session, {**body, "messageId": rng.choice(["m1", "m2"])})
        case 2:
            status = rng.choice(["pending", "in_progress", "completed"])
            call = rng.choice(["t1", "t2"])
            body = {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status}
            return update(session, {**body, "title": f"{n}"} if rng.random() < 0.5 else body)
    return {"jsonrpc": "2.0", "id": n, "result": {"n": n}}


def normal_form(messages: list[dict[str, Any]]) -> list[Any]:
    """Adjacent chunks of one message joined, adjacent updates of one tool call applied one
    over the other: what a client ends up with whether or not they were merged."""
    out: list[Any] = []
    for message in messages:
        params = message.get("params", {})
        body = params.get("update", {})
        kind = body.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            key: Any = (params["sessionId"], kind, body["messageId"])
            value: Any = body["content"]["text"]
            if out and out[-1][0] == key:
                value = out.pop()[1] + value
        elif kind == "tool_call_update":
            key, value = (params["sessionId"], kind, body["toolCallId"]), body
            if out and out[-1][0] == key:
                value = {**out.pop()[1], **body}
        else:
            key, value = None, message
        out.append((key, value))
    return out


@pytest.mark.parametrize("seed", range(4))
async def test_concurrent_senders_and_a_fitful_reader_keep_order_and_lose_nothing(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "MAX_WAITING", 8)  # senders get held too
    rng = random.Random(seed)
    read_fd, write_fd = os.pipe()
    reader, writer = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")
    transport = StdioTransport(io.BytesIO(), writer, max_line=1 << 20)
    lines: list[bytes] = []

    def read_in_fits() -> None:
        pause = random.Random(seed)
        while line := reader.readline():
            lines.append(line)
            if pause.random() < 0.01:
                time.sleep(0.002)

    reading = threading.Thread(target=read_in_fits)
    reading.start()
    sent: list[dict[str, Any]] = []

    async def sender(count: int) -> None:
        for _ in range(count):
            message = random_message(rng, len(sent))
            sent.append(message)  # send enqueues before it first waits: this is its order
            await transport.send(message)
            if rng.random() < 0.3:
                await asyncio.sleep(0)

    await asyncio.gather(*(sender(400) for _ in range(4)))
    await transport.close()
    writer.close()
    await asyncio.to_thread(reading.join, 10)
    reader.close()

    received = [json.loads(line) for line in lines]
    assert normal_form(received) == normal_form(sent)
    assert len(received) <= len(sent)
