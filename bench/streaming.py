"""Streaming cost: one turn of many one-character text deltas, over stdio, with the model
served by the scripted Messages API on 127.0.0.1 through the real anthropic SDK.

Run alone:  .venv/bin/python bench/streaming.py [--deltas 20000] [--runs 3]
Reports the agent's CPU for the turn (user + system, from /proc), the turn's wall time
against the model server's own time to send the same stream to a client that only reads
it, and how many `agent_message_chunk` updates carried the text (deltas that reach the
agent together go out as one chunk, and a client that falls behind gets its waiting chunks
merged); the same turn with three WebSocket clients (bench/stream_clients.py); and the time
the agent adds to the first chunk: from the model server having written the first text
delta (the stream then waits) to the client reading its chunk.
"""

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import stream_clients
from bench.common import Row, StdioAgent, median, print_table
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def pieces(count: int) -> tuple[str, ...]:
    return tuple(LETTERS[i % len(LETTERS)] for i in range(count))


def server_own_seconds(server: ScriptedAnthropic, count: int) -> float:
    """The model server's time to send the stream to a client that does nothing else."""
    server.script(stream(text(*pieces(count))))
    body = {"model": "claude-test", "max_tokens": 10, "stream": True, "messages": []}
    started = time.perf_counter()
    with httpx.stream("POST", f"{server.base_url}/v1/messages", json=body, timeout=120) as reply:
        for _ in reply.iter_raw():
            pass
    return time.perf_counter() - started


def one_turn(agent: StdioAgent, session_id: str) -> tuple[float, float, int, str]:
    before = len(agent.notifications)
    cpu = agent.cpu()
    started = time.perf_counter()
    result = agent.call(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "stream"}]},
    )
    wall = time.perf_counter() - started
    used = agent.cpu() - cpu
    assert result["stopReason"] == "end_turn", result
    chunks = [
        n["params"]["update"]["content"]["text"]
        for n in agent.notifications[before:]
        if n["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    return used, wall, len(chunks), "".join(chunks)


def first_chunk_seconds(server: ScriptedAnthropic, agent: StdioAgent, session_id: str) -> float:
    """From the server having flushed the first text delta (then it waits) to the client
    reading the first chunk: what the agent adds to the model's first byte."""
    release = threading.Event()
    written: list[float] = []
    hang_started = server._hang_started  # the test server's own hook, stamped here

    def stamped() -> None:
        written.append(time.perf_counter())
        hang_started()

    server._hang_started = stamped  # type: ignore[method-assign]
    server.script(stream(text("first"), HANG, text(" rest"), release=release))
    before = len(agent.notifications)
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "first"}]}
    turn = threading.Thread(target=agent.call, args=("session/prompt", prompt))
    turn.start()
    try:
        deadline = time.perf_counter() + 60
        while True:
            chunk = next(
                (
                    i
                    for i in range(before, len(agent.notifications))
                    if agent.notifications[i]["params"]["update"]["sessionUpdate"]
                    == "agent_message_chunk"
                ),
                None,
            )
            if chunk is not None or time.perf_counter() > deadline:
                break
            time.sleep(0.0005)
        if chunk is None or not written:
            raise AssertionError("the first chunk never came")
        return agent.notified_at[chunk] - written[0]
    finally:
        release.set()
        turn.join(60)
        server._hang_started = hang_started  # type: ignore[method-assign]


def measure(runs: int = 3, deltas: int = 20_000) -> list[Row]:
    expected = "".join(pieces(deltas))
    cpu, ratio, chunk_counts, own = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp, ScriptedAnthropic() as server:
        env = {
            "IAC_CODE_PROVIDER": "anthropic",
            "IAC_CODE_API_KEY": "bench-key",
            "IAC_CODE_BASE_URL": server.base_url,
            "IAC_CODE_MODEL": "claude-test",
            "IAC_CODE_MAX_RETRIES": "0",
        }
        server_own_seconds(server, deltas)  # warm the server's own code paths
        with StdioAgent(Path(tmp), Path(tmp), env) as agent:
            agent.call("initialize", {"protocolVersion": 1})
            session = agent.call("session/new", {"cwd": tmp, "mcpServers": []})["sessionId"]
            server.script(stream(text("warm", "up")))  # loads the SDK: not measured
            one_turn(agent, session)
            for _ in range(runs):
                own.append(server_own_seconds(server, deltas))
                server.script(stream(text(*pieces(deltas))))
                used, wall, chunks, received = one_turn(agent, session)
                assert received == expected, "the text arrived incomplete or out of order"
                cpu.append(used)
                ratio.append(wall / own[-1])
                chunk_counts.append(chunks)
            first = [first_chunk_seconds(server, agent, session) for _ in range(max(5, runs))]
    return [
        Row(
            f"agent CPU, one turn of {deltas:,} one-character deltas",
            median(cpu),
            "s",
            0.25,
            f"{median(cpu) / deltas * 1e6:.1f} µs per delta",
        ),
        *stream_clients.measure(runs, deltas),
        Row(
            "that turn's wall time / the model server's own time",
            median(ratio),
            "x",
            1.2,
            f"server alone {median(own) * 1000:.0f} ms; {median(chunk_counts):,.0f} chunks",
        ),
        Row(
            "time the agent adds to the model's first text byte",
            median(first) * 1000,
            "ms",
            3,
            f"max {max(first) * 1000:.1f} ms of {len(first)}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_table(measure(args.runs, args.deltas))


if __name__ == "__main__":
    main()
