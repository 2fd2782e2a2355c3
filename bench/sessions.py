"""Session store benchmark, through the real server over stdio.

Run by hand (not in CI):  .venv/bin/python bench/sessions.py [--sessions 10000]
Seeds a database with N sessions (200 of them in one cwd) plus a 1,000-message session
(half of its messages tool calls), then measures, request to response, on the server:
session/list (first page), session/load of the big session (replay included),
session/fork of the big and of a one-message session, and the server's RSS.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.stored import Stored, demo_session, history, one_message, store

IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"


def seed(url: str, n_sessions: int, shared_cwd: str, other_cwd: str) -> dict[str, str]:
    sessions: list[Stored] = [
        (
            one_message(
                f"sess_{i:06d}",
                shared_cwd if i < 200 else f"{other_cwd}/p{i % 977}",
                i,
                title=f"Session {i}",
            ),
            (),
        )
        for i in range(n_sessions)
    ]
    messages, records = history(250)
    big = demo_session("sess_big", shared_cwd, "Big", messages)
    small = demo_session("sess_small", shared_cwd, "Small", messages[:1])
    store(url, [*sessions, (big, records), (small, ())])
    return {"big": big.id, "small": small.id}


class Server:
    def __init__(self, home: Path, cwd: Path, extra_env: dict[str, str] | None = None) -> None:
        env = {
            **os.environ,
            "IAC_CODE_CONFIG_DIR": str(home),
            "IAC_CODE_PROVIDER": "demo",
            "IAC_CODE_LOG_LEVEL": "WARNING",
            **(extra_env or {}),
        }
        self.process = subprocess.Popen(
            [IAC_CODE, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.ids = iter(range(10**9))
        self.call("initialize", {"protocolVersion": 1})
        self.call("session/list", {})  # waits for the background start-up: not measured

    def call(self, method: str, params: dict) -> tuple[float, dict]:
        """Seconds from sending the request to reading its response (updates skipped)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        request_id = next(self.ids)
        line = (
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        start = time.perf_counter()
        self.process.stdin.write(line)
        self.process.stdin.flush()
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == request_id and "method" not in reply:
                elapsed = time.perf_counter() - start
                assert "result" in reply, reply
                return elapsed, reply["result"]

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(line for line in status.splitlines() if line.startswith("VmRSS"))
        return int(kib.split()[1]) / 1024

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def timed(server: Server, runs: int, method: str, params: dict) -> list[float]:
    return [server.call(method, params)[0] * 1000 for _ in range(runs)]


def report(label: str, values: list[float]) -> None:
    values = sorted(values)
    print(
        f"  {label:42} median {statistics.median(values):7.1f} ms   "
        f"worst {values[-1]:7.1f} ms   ({len(values)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp, "shared")
        shared.mkdir()
        for n, label in ((args.sessions, "large"), (100, "small")):
            home = Path(tmp, f"home-{label}")
            url = f"sqlite+aiosqlite:///{home / 'iac-code.db'}"
            started = time.perf_counter()
            ids = seed(url, n, str(shared), str(Path(tmp, "other")))
            print(
                f"\n{n} stored sessions (+ a 1,000-message one), seeded in "
                f"{time.perf_counter() - started:.1f} s"
            )
            server = Server(home, shared)
            cwd = str(shared)
            report(
                "session/list cwd (200 match), first page",
                timed(server, 30, "session/list", {"cwd": cwd}),
            )
            report("session/list, all sessions, first page", timed(server, 30, "session/list", {}))
            report(
                "session/load 1,000 messages, until response",
                timed(
                    server,
                    5,
                    "session/load",
                    {"sessionId": ids["big"], "cwd": cwd, "mcpServers": []},
                ),
            )
            report(
                "session/fork of the 1,000-message session",
                timed(
                    server,
                    20,
                    "session/fork",
                    {"sessionId": ids["big"], "cwd": cwd, "mcpServers": []},
                ),
            )
            report(
                "session/fork of a one-message session",
                timed(
                    server,
                    20,
                    "session/fork",
                    {"sessionId": ids["small"], "cwd": cwd, "mcpServers": []},
                ),
            )
            print(f"  server RSS after the above: {server.rss_mib():.1f} MiB")
            server.close()


if __name__ == "__main__":
    main()
