"""The stdio writer with a client that reads slowly, and with one that keeps up."""

import asyncio
import io
import json
import os
import threading

import pytest

from adapters.stdio import transport as stdio
from adapters.stdio.transport import StdioTransport
from tests.support.updates import text_chunk


def texts(lines: list[bytes]) -> list[str]:
    return [json.loads(line)["params"]["update"]["content"]["text"] for line in lines]


@pytest.fixture
def pipe():
    read_fd, write_fd = os.pipe()
    reader, writer = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")
    yield reader, writer
    reader.close()
    if not writer.closed:
        writer.close()


async def test_a_client_that_does_not_read_gets_the_whole_text_in_fewer_chunks(pipe) -> None:
    reader, writer = pipe
    transport = StdioTransport(io.BytesIO(), writer, max_line=1 << 20)
    letters = [chr(ord("a") + i % 26) for i in range(20_000)]

    for letter in letters:  # 20,000 lines are far more than the pipe holds
        await transport.send(text_chunk(letter))
    await transport.send({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    lines: list[bytes] = []
    draining = threading.Thread(target=lambda: lines.extend(reader))
    draining.start()
    await transport.close()
    writer.close()
    await asyncio.to_thread(draining.join, 10)

    assert "".join(texts(lines[:-1])) == "".join(letters)
    assert len(lines) - 1 < len(letters) // 10
    assert json.loads(lines[-1])["result"] == {"stopReason": "end_turn"}


async def test_a_client_that_keeps_up_gets_every_chunk_as_it_was_sent(pipe) -> None:
    reader, writer = pipe
    transport = StdioTransport(io.BytesIO(), writer, max_line=1 << 20)
    received: list[bytes] = []

    for letter in "keeping up":
        await transport.send(text_chunk(letter))
        received.append(await asyncio.to_thread(reader.readline))  # the first is never held
    await transport.close()

    assert texts(received) == list("keeping up")


async def test_messages_that_cannot_merge_hold_the_sender_once_too_many_wait(
    pipe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "MAX_WAITING", 20)
    reader, writer = pipe
    transport = StdioTransport(io.BytesIO(), writer, max_line=1 << 20)
    big = "x" * 70_000  # one message fills the pipe: the writer blocks on it
    await transport.send(text_chunk(big, message="first"))
    sent: list[str] = []
    held = None
    for n in range(2_000):  # each its own message: nothing merges
        sent.append(f"y{n}")
        task = asyncio.ensure_future(transport.send(text_chunk(sent[-1], message=f"m{n}")))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        if not task.done():
            held = task
            break

    assert held is not None, "no sender was held while the client read nothing"
    assert len(sent) < 2_000
    lines: list[bytes] = []
    draining = threading.Thread(target=lambda: lines.extend(reader))
    draining.start()
    await asyncio.wait_for(held, 10)
    await transport.close()
    writer.close()
    await asyncio.to_thread(draining.join, 10)

    assert texts(lines) == [big, *sent]
