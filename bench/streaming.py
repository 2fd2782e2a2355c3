"""Streaming cost: one turn of many one-character text deltas, over stdio, with the model
served by the scripted Messages API on 127.0.0.1 through the real anthropic SDK.

Run alone:  .venv/bin/python bench/streaming.py [--deltas 20000] [--runs 3]
Reports the agent's CPU for the turn (user + system, from /proc), the turn's wall time
against the model server's own time to send the same stream to a client that only reads
it, and how many `agent_message_chunk` updates carried the text (a fast reader gets one per
delta; fewer means deltas were merged while the client was behind).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text

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
    return [
        Row(
            f"agent CPU, one turn of {deltas:,} one-character deltas",
            median(cpu),
            "s",
            0.3,
            f"{median(cpu) / deltas * 1e6:.1f} µs per delta",
        ),
        Row(
            "that turn's wall time / the model server's own time",
            median(ratio),
            "x",
            1.5,
            f"server alone {median(own) * 1000:.0f} ms; {median(chunk_counts):,.0f} chunks",
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
