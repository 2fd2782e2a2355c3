"""A cluster behind nginx under load: for 2, 3 and 4 replicas on one database, N HTTP
connections at once through nginx (deploy/nginx's configuration), each `initialize`,
`session/new`, one short prompt to the demo model at full speed (its reply read from the
SSE stream), then DELETE. Prints throughput (prompts a second, over the whole run) and
latencies per replica count.

Run by hand (not in CI), nginx installed (scripts/ensure-nginx):
    .venv/bin/python bench/cluster.py [--connections 200] [--replicas 2 3 4]
        [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/test]

The replicas share a new SQLite file for each replica count, or with --postgres a new
database on that server (made and dropped with psql).

The harness is tests/support/cluster.py, the one tests/cluster uses. Every connection must
end its prompt with end_turn and stay on the replica its id names; anything else fails the
run. Latency of a prompt: from its POST to its response on the stream (the whole reply
streamed before it). Everything (clients, nginx, replicas, database) shares this machine's
cores, so the figures say what the cluster costs more than how it scales.
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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import cpu_seconds  # noqa: E402  (after the path above)
from tests.support.cluster import (  # noqa: E402
    AcpClient,
    Cluster,
    ensure_nginx,
    postgres_database,
    running_cluster,
    sqlite_url,
)

PROMPT = "hello"  # the demo model's short answer (~90 words) to what it does not know


@dataclass(frozen=True, slots=True)
class Result:
    replicas: int
    connections: int
    seconds: float  # wall time of the whole run, first initialize to last DELETE
    prompt_ms: list[float]
    connection_ms: list[float]  # initialize to DELETE answered
    per_replica: dict[str, int]
    replica_cpu: float  # seconds, all replicas together, during the run
    nginx_cpu: float
    client_cpu: float  # this process: every client, one event loop

    @property
    def throughput(self) -> float:
        return self.connections / self.seconds


def p99(values: list[float]) -> float:
    ranked = sorted(values)
    return ranked[max(0, math.ceil(0.99 * len(ranked)) - 1)]


async def one_connection(
    cluster: Cluster, cwd: Path, tls: ssl.SSLContext
) -> tuple[float, float, str]:
    # A client of its own per connection, as separate users have: httpx's pool scans all
    # its connections on each request, so one pool for 200 streams would cost the client
    # more than the cluster. They share one TLS context (unused on http://, but httpx makes
    # one per client otherwise, at 20 ms each).
    async with httpx.AsyncClient(timeout=60, verify=tls) as http:
        began = time.perf_counter()
        client = AcpClient(http, cluster.url, cluster.token)
        try:
            await client.open()
            new = await client.call("session/new", {"cwd": str(cwd), "mcpServers": []})
            session_id = new["result"]["sessionId"]
            sent = time.perf_counter()
            answer = await client.call(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]},
            )
            answered = time.perf_counter()
            assert answer.get("result", {}).get("stopReason") == "end_turn", answer
        finally:
            await client.close()
        ended = time.perf_counter()
    replica = cluster.replica_of(client.id or "").id
    return (answered - sent) * 1000, (ended - began) * 1000, replica


async def load(
    cluster: Cluster, connections: int, cwd: Path
) -> tuple[float, list[tuple[float, float, str]]]:
    tls = ssl.create_default_context()
    began = time.perf_counter()
    runs = await asyncio.gather(*(one_connection(cluster, cwd, tls) for _ in range(connections)))
    return time.perf_counter() - began, list(runs)


def measure(nginx: str, replicas: int, connections: int, postgres: str | None) -> Result:
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="iac-cluster-")))
        url = stack.enter_context(postgres_database(postgres)) if postgres else sqlite_url(root)
        env = {
            "IAC_CODE_DEMO_PACE": "0",  # the model at full speed: the cluster's own cost
            "IAC_CODE_LOG_LEVEL": "WARNING",
            "IAC_CODE_HTTP_MAX_CONNECTIONS": str(connections + 10),  # all on one, at worst
        }
        with running_cluster(nginx, root, url, replicas=replicas, env=env) as cluster:
            pids = [r.process.pid for r in cluster.replicas.values()]
            before = [cpu_seconds(pid) for pid in pids], nginx_cpu(cluster), time.process_time()
            seconds, runs = asyncio.run(load(cluster, connections, root))
            after = [cpu_seconds(pid) for pid in pids], nginx_cpu(cluster), time.process_time()
            for replica in cluster.replicas.values():  # nobody fell over under the load
                assert replica.process.poll() is None, replica.log.read_text()[-2000:]
    return Result(
        replicas,
        connections,
        seconds,
        [r[0] for r in runs],
        [r[1] for r in runs],
        dict(sorted(Counter(r[2] for r in runs).items())),
        sum(after[0]) - sum(before[0]),
        after[1] - before[1],
        after[2] - before[2],
    )


def nginx_cpu(cluster: Cluster) -> float:
    """nginx's master and workers (the workers are the master's children)."""
    master = cluster.nginx.process.pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return sum(cpu_seconds(pid) for pid in [master, *map(int, children)])


def table(results: list[Result]) -> str:
    lines = [
        f"{'replicas':>8} {'prompts/s':>10} {'prompt p50':>11} {'prompt p99':>11} "
        f"{'connection p99':>15} {'CPU ms a connection: replicas':>30} {'nginx':>6} "
        f"{'client':>7}  connections per replica"
    ]
    for r in results:
        per = 1000 / r.connections
        lines.append(
            f"{r.replicas:>8} {r.throughput:>10.1f} {statistics.median(r.prompt_ms):>8.0f} ms "
            f"{p99(r.prompt_ms):>8.0f} ms {p99(r.connection_ms):>12.0f} ms "
            f"{r.replica_cpu * per:>30.1f} {r.nginx_cpu * per:>6.1f} {r.client_cpu * per:>7.1f}  "
            + ", ".join(f"{k} {v}" for k, v in r.per_replica.items())
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--replicas", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server (default SQLite)")
    args = parser.parse_args()
    nginx, why = ensure_nginx()
    if nginx is None:
        print(why, file=sys.stderr)
        return 1
    results = []
    for count in args.replicas:
        results.append(measure(nginx, count, args.connections, args.postgres))
        print(f"{count} replicas: done in {results[-1].seconds:.1f} s", file=sys.stderr)
    backend = "PostgreSQL" if args.postgres else "SQLite"

    print(
        f"{args.connections} connections at once through nginx, demo model at full speed, {backend}"
    )
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
