"""Start-up: how soon a freshly spawned `iac-code acp` serves, over stdio and over HTTP.

Run alone:  .venv/bin/python bench/start.py [--runs 5]
Each run spawns a new process against an existing database (migrated, 100 stored sessions
in one cwd, seeded directly), except the fresh-database row (a new, empty config directory
each run: the database is created by that first process). Rows:
- stdio: `initialize` from spawn, RSS when it is answered; then the first `session/new`
  from spawn; in another process the first `session/list` (request to response, and from
  spawn), each after `initialize`;
- the same `initialize` and `session/new` with `IAC_CODE_API_KEY` set (the server then
  re-executes itself once without the key: bootstrap/environment.py);
- HTTP: spawn until a TCP connect to the port succeeds, and until `/healthz` answers.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import IAC_CODE, Row, StdioAgent, median, print_table

STORED = 100


def seed(home: Path, cwd: str) -> None:
    """A migrated database holding STORED one-message sessions in `cwd`."""
    from bench.stored import one_message, store

    sessions = [(one_message(f"sess_{i:04d}", cwd, i), ()) for i in range(STORED)]
    store(f"sqlite+aiosqlite:///{home}/iac-code.db", sessions)


def stdio_new(home: Path, cwd: Path, env: dict[str, str]) -> tuple[float, float, float, float]:
    """(initialize from spawn, RSS MiB then, session/new from spawn, the first prompt's
    answer from spawn), in seconds/MiB. The session/new is answered before the agent has
    loaded (bootstrap/early.py): the prompt right behind it shows when the agent serves."""
    with StdioAgent(home, cwd, {"IAC_CODE_DEMO_PACE": "0", **env}) as agent:
        initialized = agent.since_start("initialize", {"protocolVersion": 1})
        rss = agent.rss_kib() / 1024
        created, made = agent.answered_since_start(
            "session/new", {"cwd": str(cwd), "mcpServers": []}
        )
        text = [{"type": "text", "text": "hello"}]
        prompted = agent.since_start(
            "session/prompt", {"sessionId": made["sessionId"], "prompt": text}
        )
    return initialized, rss, created, prompted


def fresh_new(parent: Path, cwd: Path) -> float:
    """Seconds from spawn to the first `session/new` answered, on a database not yet created
    (what every new user waits for first)."""
    home = Path(tempfile.mkdtemp(dir=parent))
    with StdioAgent(home, cwd) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        created = agent.since_start("session/new", {"cwd": str(cwd), "mcpServers": []})
    assert (home / "iac-code.db").exists()
    return created


def stdio_list(home: Path, cwd: Path) -> tuple[float, float]:
    """(the first session/list request to response, and from spawn), in seconds."""
    with StdioAgent(home, cwd) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        took, result = agent.timed_call("session/list", {"cwd": str(cwd)})
        since = time.perf_counter() - agent.started
    assert len(result["sessions"]) == 50, result  # a full first page
    return took, since


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http_start(home: Path, cwd: Path) -> tuple[float, float]:
    """(spawn → a TCP connect succeeds, spawn → /healthz answers 200), in seconds."""
    port = free_port()
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(home),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_LOG_LEVEL": "WARNING",
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        [IAC_CODE, "acp", "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    try:
        connected = _until(lambda: _connects(port), process) - started
        healthy = _until(lambda: _healthy(port), process) - started
    finally:
        process.terminate()
        process.wait(15)
    return connected, healthy


def _until(probe: Callable[[], bool], process: subprocess.Popen[bytes]) -> float:
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline:
        assert process.poll() is None, "the server exited"
        if probe():
            return time.perf_counter()
        time.sleep(0.002)
    raise TimeoutError("the server did not come up")


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def measure(runs: int = 5) -> list[Row]:
    keyed = {"IAC_CODE_API_KEY": "bench-key"}
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        cwd.mkdir()
        seed(home, str(cwd))
        stdio_new(home, cwd, {})  # warm the OS's file cache: not measured
        fresh = [fresh_new(Path(tmp), cwd) for _ in range(runs)]
        plain = [stdio_new(home, cwd, {}) for _ in range(runs)]
        with_key = [stdio_new(home, cwd, keyed) for _ in range(runs)]
        listed = [stdio_list(home, cwd) for _ in range(runs)]
        http = [http_start(home, cwd) for _ in range(runs)]
    ms = 1000
    return [
        Row("initialize, from spawn (stdio)", median([r[0] for r in plain]) * ms, "ms", 60),
        Row("RSS when initialize is answered", median([r[1] for r in plain]), "MiB", 30),
        Row(
            "first session/new, from spawn (stdio, existing database)",
            median([r[2] for r in plain]) * ms,
            "ms",
            150,
        ),
        Row(
            "  the first session/prompt right behind it answered (demo model), from spawn",
            median([r[3] for r in plain]) * ms,
            "ms",
            None,
            "the agent loaded meanwhile",
        ),
        Row(
            "first session/new, from spawn (stdio, fresh database)",
            median(fresh) * ms,
            "ms",
            300,
            f"worst {max(fresh) * ms:.0f} ms",
        ),
        Row(
            "  the same with IAC_CODE_API_KEY set (re-exec)",
            median([r[2] for r in with_key]) * ms,
            "ms",
            None,
            f"initialize {median([r[0] for r in with_key]) * ms:.0f} ms from spawn",
        ),
        Row(
            f"first session/list after start, {STORED} stored",
            median([r[0] for r in listed]) * ms,
            "ms",
            30,
            f"{median([r[1] for r in listed]) * ms:.0f} ms from spawn",
        ),
        Row(
            "HTTP: process start → listening (TCP connect)",
            median([r[0] for r in http]) * ms,
            "ms",
            400,
            f"/healthz answers at {median([r[1] for r in http]) * ms:.0f} ms",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print_table(measure(args.runs))


if __name__ == "__main__":
    main()
