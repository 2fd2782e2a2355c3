"""What following a session from another replica costs (issue 32): two replicas on one
PostgreSQL database, N sessions each made on replica 1 by one client and loaded on replica 2
by another, then every session prompted at once on replica 1 (the demo model at a real
model's pace). For each numbered update, the follower's arrival time minus the runner's
(both clients in this process, one clock) is the latency the relay adds; the database's
committed transactions during the turns, per streamed update, are its load. The same turns
with no follower give the baseline: the journal's own writes.

Run by hand (not in CI), nginx not needed:
    .venv/bin/python bench/cross_replica.py [--sessions 50] [--pace 40]
        [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/test]

Everything (clients, replicas, database) shares this machine's cores.
"""

import argparse
import asyncio
import contextlib
import math
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.cluster import (  # noqa: E402  (after the path above)
    AcpClient,
    Replica,
    postgres_database,
    start_replica,
    wait_until_ready,
)

PROMPT = "hello"  # the demo model's answer of ~90 words


@dataclass
class TimedClient(AcpClient):
    """Records when each numbered update arrived."""

    arrived: dict[tuple[str, int], float] = field(default_factory=dict)

    async def _receive(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/update":
            params = message["params"]
            seq = params.get("_meta", {}).get("iac_code", {}).get("seq")
            if isinstance(seq, int):
                self.arrived[(params["sessionId"], seq)] = time.perf_counter()
        await super()._receive(message)


def p(values: list[float], share: float) -> float:
    ranked = sorted(values)
    return ranked[max(0, math.ceil(share * len(ranked)) - 1)]


def commits(url: str) -> int:
    """Transactions committed in the database so far (pg_stat_database)."""
    parts = urlsplit(url)
    database = parts.path.lstrip("/")
    sql = (
        "SELECT pg_stat_force_next_flush(); "
        f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{database}'"
    )
    out = subprocess.run(
        [
            "psql",
            "-X",
            "-q",
            "-t",
            "-A",
            "-h",
            parts.hostname or "127.0.0.1",
            "-p",
            str(parts.port or 5432),
            "-U",
            parts.username or "postgres",
            "-d",
            database,
            "-c",
            sql,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    return int(out[-1])


async def run(
    replicas: list[Replica], token: str, sessions: int, follow: bool, cwd: Path
) -> tuple[list[float], int]:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=4 * sessions)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        runners = [TimedClient(http, replicas[0].url, token) for _ in range(sessions)]
        followers = (
            [TimedClient(http, replicas[1].url, token) for _ in range(sessions)] if follow else []
        )
        await asyncio.gather(*(c.open() for c in runners + followers))
        ids = []
        for runner in runners:
            made = await runner.call("session/new", {"cwd": str(cwd), "mcpServers": []})
            ids.append(made["result"]["sessionId"])
        for follower, sid in zip(followers, ids if follow else [], strict=True):
            loaded = await follower.call(
                "session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []}
            )
            assert "result" in loaded, loaded
        await asyncio.sleep(2.0)  # every follow known to replica 1
        for runner in runners:  # what came before the follower attached (the announce)
            runner.arrived.clear()
        answers = await asyncio.gather(
            *(
                r.call(
                    "session/prompt",
                    {"sessionId": sid, "prompt": [{"type": "text", "text": PROMPT}]},
                )
                for r, sid in zip(runners, ids, strict=True)
            )
        )
        assert all(a["result"]["stopReason"] == "end_turn" for a in answers), answers
        streamed = sum(len(r.arrived) for r in runners)
        added: list[float] = []
        if follow:
            # Text chunks that waited side by side for a client arrive merged (under the
            # newest one's number): the follower is through once it has the last number.
            deadline = time.monotonic() + 30
            pairs = list(zip(runners, followers, strict=True))
            while any(max(r.arrived) not in f.arrived for r, f in pairs):
                assert time.monotonic() < deadline, "a follower never got the last update"
                await asyncio.sleep(0.05)
            for runner, follower in zip(runners, followers, strict=True):
                added += [
                    (follower.arrived[k] - t) * 1000
                    for k, t in runner.arrived.items()
                    if k in follower.arrived
                ]
        for client in runners + followers:
            await client.close()
    return added, streamed


def measure(
    url: str, root: Path, sessions: int, pace: float, follow: bool
) -> tuple[list[float], int, int]:
    env = {
        "IAC_CODE_DEMO_PACE": str(pace),
        "IAC_CODE_LOG_LEVEL": "WARNING",
        "IAC_CODE_HTTP_MAX_CONNECTIONS": str(4 * sessions),
    }
    started = [start_replica(f"r{n}", root, url, "bench-token", env) for n in (1, 2)]
    try:
        for replica in started:
            wait_until_ready(replica)
        before = commits(url)
        added, streamed = asyncio.run(run(started, "bench-token", sessions, follow, root))
        time.sleep(1.0)  # the last flushes
        return added, streamed, commits(url) - before
    finally:
        for replica in started:
            replica.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--pace", type=float, default=40.0, help="demo tokens a second")
    parser.add_argument("--postgres", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    rows = []
    for follow in (False, True):
        with contextlib.ExitStack() as stack:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="iac-follow-")))
            url = stack.enter_context(postgres_database(args.postgres))
            rows.append((follow, *measure(url, root, args.sessions, args.pace, follow)))
    print(
        f"{args.sessions} sessions prompted at once on replica 1, "
        f"demo model at {args.pace:g} tokens/s, PostgreSQL"
    )
    print(
        f"{'followers on replica 2':>24} {'updates':>8} {'commits':>8} {'commits/update':>15} "
        f"{'added p50':>10} {'added p99':>10} {'max':>8}"
    )
    for follow, added, streamed, committed in rows:
        lat = (
            f"{statistics.median(added):>7.1f} ms {p(added, 0.99):>7.1f} ms {max(added):>5.0f} ms"
            if added
            else f"{'-':>10} {'-':>10} {'-':>8}"
        )
        print(
            f"{'yes' if follow else 'no':>24} {streamed:>8} {committed:>8} "
            f"{committed / max(streamed, 1):>15.3f} {lat}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
