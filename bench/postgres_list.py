"""The first `session/list` after a restart on PostgreSQL, with 10,000 stored sessions.

Run alone:  .venv/bin/python bench/postgres_list.py [--runs 5] [--server-url URL]
On the PostgreSQL server at $IAC_CODE_TEST_POSTGRES_URL (else the local one), in a database
of its own (created, seeded in bulk, dropped after; the server itself is never touched),
each run spawns a new `iac-code acp`, answers `initialize`, then times the first
`session/list` (all sessions, first page) request to response; the same for a cwd filter;
the same sent 300 ms after `initialize` (as an editor's session picker may); then, for
comparison in the same conditions, the same sessions in a SQLite file. Without a reachable
server it adds no row and says so on stderr.
"""

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table

SESSIONS = 10_000
IN_ONE_CWD = 200
PAUSE = 0.3  # an editor that lists when its session picker opens, after the handshake
DEFAULT_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    return os.environ.get("IAC_CODE_TEST_POSTGRES_URL") or DEFAULT_SERVER


def seed(url: str, shared_cwd: str, other_cwd: str) -> None:
    from bench.stored import one_message, store

    sessions = [
        (
            one_message(
                f"sess_{i:06d}",
                shared_cwd if i < IN_ONE_CWD else f"{other_cwd}/p{i % 977}",
                i,
                title=f"Session {i}",
            ),
            (),
        )
        for i in range(SESSIONS)
    ]
    store(url, sessions)


def first_list(
    home: Path, cwd: Path, url: str, params: dict[str, str], pause: float = 0.0
) -> tuple[float, float]:
    """(the first session/list request to response, and from spawn), in seconds; sent
    `pause` seconds after `initialize` is answered."""
    with StdioAgent(home, cwd, {"IAC_CODE_DATABASE_URL": url}) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        time.sleep(pause)
        took, result = agent.timed_call("session/list", params)
        since = time.perf_counter() - agent.started
    assert len(result["sessions"]) == 50, result  # a full first page
    assert "nextCursor" in result, result
    return took, since


def measure(runs: int = 3) -> list[Row]:
    from bench.postgres_scale import scratch_database

    with ExitStack() as stack:
        try:
            url = stack.enter_context(scratch_database(server_url()))
        except OSError as exc:
            print(f"postgres_list: no PostgreSQL ({exc}): no row", file=sys.stderr)
            return []
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home, cwd = tmp / "home", tmp / "project"
        home.mkdir()
        cwd.mkdir()
        seed(url, str(cwd), str(tmp / "other"))
        first_list(home, cwd, url, {})  # warm the OS's file cache: not measured
        every = [first_list(home, cwd, url, {}) for _ in range(runs)]
        in_cwd = [first_list(home, cwd, url, {"cwd": str(cwd)}) for _ in range(runs)]
        later = [first_list(home, cwd, url, {}, PAUSE) for _ in range(runs)]
        sqlite = f"sqlite+aiosqlite:///{tmp / 'same.db'}"  # the same sessions, for comparison
        seed(sqlite, str(cwd), str(tmp / "other"))
        on_sqlite = [first_list(home, cwd, sqlite, {}) for _ in range(runs)]
    ms = 1000
    return [
        Row(
            f"first session/list after restart, PostgreSQL, {SESSIONS:,} stored",
            median([r[0] for r in every]) * ms,
            "ms",
            50,
            f"worst {max(r[0] for r in every) * ms:.0f}; "
            f"{median([r[1] for r in every]) * ms:.0f} ms from spawn",
        ),
        Row(
            "  the same, one cwd's sessions",
            median([r[0] for r in in_cwd]) * ms,
            "ms",
            50,
            f"worst {max(r[0] for r in in_cwd) * ms:.0f}",
        ),
        Row(
            f"  the same, sent {PAUSE * 1000:.0f} ms after initialize",
            median([r[0] for r in later]) * ms,
            "ms",
            50,
            f"worst {max(r[0] for r in later) * ms:.0f}",
        ),
        Row(
            "  the same sessions on SQLite, side by side",
            median([r[0] for r in on_sqlite]) * ms,
            "ms",
            None,
            f"worst {max(r[0] for r in on_sqlite) * ms:.0f}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--server-url", default="")
    args = parser.parse_args()
    if args.server_url:
        os.environ["IAC_CODE_TEST_POSTGRES_URL"] = args.server_url
    print_table(measure(args.runs))


if __name__ == "__main__":
    main()
