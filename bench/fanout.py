"""Several clients on one session: what each added client costs the delivery of updates.

One real server (`iac-code http`, the demo model, a new SQLite file), S sessions. Each
session has C clients over HTTP + SSE: the first opens it (`session/new`), the others attach
with `session/resume`, then the first sends one prompt; all S prompts run at once. Every
client stamps each `session/update` as it reads it from its stream.

For one session, the k-th client's added latency for an update is the time between the
first client reading it and the k-th client reading it (the same update: every client must
receive the same updates in the same order, or the run fails). Reported per client
position: p50/p99/max over every update of every session; and the prompt's latency (POST to
response) with C clients against a run with 1 client per session, the same S.

Run by hand (not in CI):
    .venv/bin/python bench/fanout.py [--sessions 50] [--clients 3] [--pace 40]

The clients share this process and the machine's cores with the server: on a small machine
part of the spread is the clients' own scheduling, so the figures are an upper bound.
"""

import argparse
import asyncio
import contextlib
import math
import ssl
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import cpu_seconds  # noqa: E402  (after the path above)
from tests.support.cluster import AcpClient, Replica, start_replica, wait_until_ready  # noqa: E402

PROMPT = "hello"  # the demo model's short answer (~90 words) to what it does not know


@dataclass
class StampingClient(AcpClient):
    """Each `session/update` with the moment it was read (perf_counter seconds)."""

    stamps: list[float] = field(default_factory=list)

    async def _receive(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/update":
            self.stamps.append(time.perf_counter())
        await super()._receive(message)


@dataclass(frozen=True, slots=True)
class SessionRun:
    prompt_ms: float
    added_ms: list[list[float]]  # per client after the first: the delay of each update


def p(values: list[float], q: float) -> float:
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q * len(ranked)) - 1)]


def live_updates(client: StampingClient, since: int) -> tuple[list[dict[str, Any]], list[float]]:
    """The updates read after index `since` (the prompt's), without `_meta` (a client that
    attaches later is told its turn state there), with their stamps."""
    updates = [
        {key: value for key, value in u.items() if key != "_meta"} for u in client.updates[since:]
    ]
    return updates, client.stamps[since:]


async def one_session(base: str, token: str, cwd: Path, clients: int, tls: Any) -> SessionRun:
    async with contextlib.AsyncExitStack() as stack:
        opened: list[StampingClient] = []
        for _ in range(clients):
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=120, verify=tls))
            client = StampingClient(http, base, token)
            stack.push_async_callback(client.close)
            await client.open()
            opened.append(client)
        first, others = opened[0], opened[1:]
        new = await first.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        for client in others:
            resumed = await client.call(
                "session/resume", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
            )
            assert "result" in resumed, resumed
        await asyncio.sleep(0.2)  # the announcements after new/resume arrive first
        marks = [len(c.updates) for c in opened]
        sent = time.perf_counter()
        answer = await first.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]},
        )
        prompt_ms = (time.perf_counter() - sent) * 1000
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer
        reference, first_stamps = live_updates(first, marks[0])
        await caught_up(others, [m + len(reference) for m in marks[1:]])
        added: list[list[float]] = []
        for client, mark in zip(others, marks[1:], strict=True):
            updates, stamps = live_updates(client, mark)
            if updates != reference:
                raise AssertionError(f"client updates differ in session {session_id}")
            added.append([(b - a) * 1000 for a, b in zip(first_stamps, stamps, strict=True)])
        return SessionRun(prompt_ms, added)


async def caught_up(clients: list[StampingClient], counts: list[int]) -> None:
    """Until each client has read as many updates as the first (it may still be reading)."""
    deadline = time.perf_counter() + 30
    while any(len(c.updates) < n for c, n in zip(clients, counts, strict=True)):
        if time.perf_counter() > deadline:
            raise AssertionError("a client did not receive every update of the prompt")
        await asyncio.sleep(0.01)


async def load(base: str, token: str, cwd: Path, sessions: int, clients: int) -> list[SessionRun]:
    tls = ssl.create_default_context()
    runs = [one_session(base, token, cwd, clients, tls) for _ in range(sessions)]
    return list(await asyncio.gather(*runs))


def serve(root: Path, sessions: int, clients: int, pace: float) -> tuple[Replica, str]:
    token = f"fanout-{uuid.uuid4().hex}"
    env = {
        "IAC_CODE_DEMO_PACE": str(pace),
        "IAC_CODE_LOG_LEVEL": "WARNING",
        "IAC_CODE_HTTP_MAX_CONNECTIONS": str(sessions * clients + 10),
    }
    replica = start_replica("r1", root, f"sqlite+aiosqlite:///{root}/store.db", token, env)
    wait_until_ready(replica)
    return replica, token


def measure(sessions: int, clients: int, pace: float) -> tuple[list[SessionRun], float]:
    """The runs, and the server's CPU seconds a prompt."""
    with tempfile.TemporaryDirectory(prefix="iac-fanout-") as tmp:
        root = Path(tmp)
        replica, token = serve(root, sessions, clients, pace)
        try:
            before = cpu_seconds(replica.process.pid)
            runs = asyncio.run(load(replica.url, token, root, sessions, clients))
            cpu = (cpu_seconds(replica.process.pid) - before) / sessions
            assert replica.process.poll() is None, replica.log.read_text()[-2000:]
        finally:
            replica.stop()
    return runs, cpu


def report(sessions: int, clients: int, pace: float) -> str:
    alone, alone_cpu = measure(sessions, 1, pace)
    shared, shared_cpu = measure(sessions, clients, pace)
    lines = [
        f"{sessions} sessions, demo model at {pace:g} tokens/s, all prompts at once",
        "",
        "| clients a session | prompt p50 | prompt p99 | server CPU a prompt |",
        "|---|---|---|---|",
    ]
    for count, runs, cpu in ((1, alone, alone_cpu), (clients, shared, shared_cpu)):
        prompts = [r.prompt_ms for r in runs]
        lines.append(
            f"| {count} | {statistics.median(prompts):.0f} ms | {p(prompts, 0.99):.0f} ms "
            f"| {cpu * 1000:.0f} ms |"
        )
    lines += [
        "",
        "| client | updates | added p50 | added p99 | added max |",
        "|---|---|---|---|---|",
    ]
    for position in range(clients - 1):
        delays = [d for r in shared for d in r.added_ms[position]]
        lines.append(
            f"| {position + 2} | {len(delays)} | {statistics.median(delays):.2f} ms "
            f"| {p(delays, 0.99):.2f} ms | {max(delays):.2f} ms |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--pace", type=float, default=40.0)
    args = parser.parse_args()
    print(report(args.sessions, args.clients, args.pace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
