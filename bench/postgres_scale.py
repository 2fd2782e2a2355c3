"""The session store on PostgreSQL at scale, through the real server over stdio.

Run by hand (not in CI):
    .venv/bin/python bench/postgres_scale.py [--server-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
On the PostgreSQL server named (default: $IAC_CODE_TEST_POSTGRES_URL, else the local one),
for 1,000 and for 100,000 stored sessions in turn, in a database of its own (created, seeded
in bulk, dropped): session/list (first page, one cwd and all), session/load of a
1,000-message session, session/fork of it and of a one-message session, request to response.
Targets: list < 20 ms, load < 150 ms, fork < 20 ms, whatever the number of sessions.
"""

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.sessions import Server, report, seed, timed

DEFAULT_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


async def _admin(server_url: str, statement: str) -> None:
    dsn = make_url(server_url).set(drivername="postgresql").render_as_string(False)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def scratch_database(server_url: str) -> Iterator[str]:
    name = f"iac_bench_{os.getpid()}_{secrets.token_hex(4)}"
    asyncio.run(_admin(server_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(False)
    finally:
        asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def measure(server_url: str, count: int, tmp: Path) -> None:
    shared = tmp / f"shared-{count}"
    shared.mkdir()
    with scratch_database(server_url) as url:
        started = time.perf_counter()
        ids = seed(url, count, str(shared), str(tmp / "other"))
        print(
            f"\n{count:,} stored sessions (+ a 1,000-message one) on PostgreSQL, seeded in "
            f"{time.perf_counter() - started:.1f} s"
        )
        server = Server(tmp / f"home-{count}", shared, {"IAC_CODE_DATABASE_URL": url})
        cwd = str(shared)
        try:
            report(
                "session/list cwd (200 match), first page",
                timed(server, 30, "session/list", {"cwd": cwd}),
            )
            report("session/list, all sessions, first page", timed(server, 30, "session/list", {}))
            big = {"sessionId": ids["big"], "cwd": cwd, "mcpServers": []}
            small = {"sessionId": ids["small"], "cwd": cwd, "mcpServers": []}
            report(
                "session/load 1,000 messages, until response", timed(server, 5, "session/load", big)
            )
            report(
                "session/fork of the 1,000-message session", timed(server, 20, "session/fork", big)
            )
            report(
                "session/fork of a one-message session", timed(server, 20, "session/fork", small)
            )
        finally:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--server-url", default=os.environ.get("IAC_CODE_TEST_POSTGRES_URL") or DEFAULT_SERVER
    )
    parser.add_argument("--counts", default="1000,100000", help="stored sessions, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for count in (int(c) for c in args.counts.split(",")):
            measure(args.server_url, count, Path(tmp))


if __name__ == "__main__":
    main()
