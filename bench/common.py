"""What the benchmarks share: the real `iac-code` process over stdio, read from outside, and
one row format for the table `make bench` prints.

Each benchmark module offers `measure(runs: int) -> list[Row]`; `bench/targets.py` runs them
all. Nothing here is imported by the product or asserted by a test.
"""

import contextlib
import json
import math
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the targets table: a measured figure against its target."""

    what: str
    value: float
    unit: str  # "ms", "s", "KiB", "MiB" or "x"
    target: float | None = None  # the figure must be <= this
    detail: str = ""

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.value <= self.target


def median(values: list[float]) -> float:
    return statistics.median(values)


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def tree_cpu_seconds(pid: int) -> float:
    """CPU used so far by `pid` and every process below it still running (an agent that
    does its work in a child process, as claude-code-acp's CLI does, is counted whole)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
    tree, grown = {pid}, True
    while grown:
        below = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= below
        grown = bool(below)
    total = 0.0
    for member in tree:
        with contextlib.suppress(OSError):
            total += cpu_seconds(member)
    return total


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS"))
    return int(line.split()[1])


class StdioAgent:
    """`iac-code acp` (or another ACP agent's `command`) in a subprocess of its own process
    group, spoken to in raw JSON lines. A reader thread takes every line as soon as it is
    written (a fast client), keeping notifications in order. `unset`: variables removed
    from the agent's environment."""

    def __init__(
        self,
        home: Path,
        cwd: Path,
        env: dict[str, str] | None = None,
        *,
        command: list[str] | None = None,
        unset: tuple[str, ...] = (),
    ) -> None:
        full_env = {
            **os.environ,
            "IAC_CODE_CONFIG_DIR": str(home),
            "IAC_CODE_PROVIDER": "demo",
            "IAC_CODE_LOG_LEVEL": "WARNING",
            **(env or {}),
        }
        for name in unset:
            full_env.pop(name, None)
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command or [IAC_CODE, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=full_env,
            cwd=cwd,
            start_new_session=True,  # its helpers (a peer's CLI) are stopped with it
        )
        self.pid = self.process.pid
        self._ids = iter(range(10**9))
        self._replies: dict[int, queue.SimpleQueue[tuple[float, dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        self.notifications: list[dict[str, Any]] = []
        self.notified_at: list[float] = []  # when each notification was read (perf_counter)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            arrived = time.perf_counter()
            message = json.loads(line)
            if "method" in message:
                if "id" in message:  # a request to the client: allow whatever it asks
                    self._answer(message)
                else:
                    self.notifications.append(message)
                    self.notified_at.append(arrived)
                continue
            with self._lock:
                box = self._replies.setdefault(message["id"], queue.SimpleQueue())
            box.put((arrived, message))

    def _answer(self, request: dict[str, Any]) -> None:
        options = request.get("params", {}).get("options", [])
        chosen = next((o["optionId"] for o in options if o.get("kind") == "allow_once"), None)
        result = {"outcome": {"outcome": "selected", "optionId": chosen}} if chosen else {}
        self._write({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
        return self.timed_call(method, params, timeout)[1]

    def timed_call(
        self, method: str, params: dict[str, Any], timeout: float = 300
    ) -> tuple[float, dict[str, Any]]:
        """Seconds from sending the request to its response arriving, and the result."""
        sent, arrived, result = self._exchange(method, params, timeout)
        return arrived - sent, result

    def since_start(self, method: str, params: dict[str, Any]) -> float:
        """Seconds from the process's start to this call's response arriving."""
        return self.answered_since_start(method, params)[0]

    def answered_since_start(
        self, method: str, params: dict[str, Any]
    ) -> tuple[float, dict[str, Any]]:
        """The same, with the result."""
        _, arrived, result = self._exchange(method, params, 300)
        return arrived - self.started, result

    def _exchange(
        self, method: str, params: dict[str, Any], timeout: float
    ) -> tuple[float, float, dict[str, Any]]:
        request_id = next(self._ids)
        with self._lock:
            box = self._replies.setdefault(request_id, queue.SimpleQueue())
        sent = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        arrived, reply = box.get(timeout=timeout)
        if "result" not in reply:
            raise RuntimeError(f"{method} failed: {reply}")
        return sent, arrived, reply["result"]

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def rss_kib(self) -> int:
        return rss_kib(self.pid)

    def tree_cpu(self) -> float:
        return tree_cpu_seconds(self.pid)

    def close(self, patience: float = 15) -> None:
        """Close its stdin and wait; past `patience` seconds, kill its process group."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=patience)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.process.wait()

    def __enter__(self) -> "StdioAgent":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes, as /proc/loadavg says."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def machine_line() -> str:
    """What the figures depend on: CPUs and how busy the machine is (read the ratios when
    the load is above the CPU count: other work then shares every core)."""
    return (
        f"{os.cpu_count()} CPUs, load average (1/5/15 min) {load_average()}, "
        f"python {sys.version.split()[0]}"
    )


def print_table(rows: list[Row]) -> None:
    """The machine, then every row with its target and whether it is met (a row without
    one says so)."""
    print(machine_line())
    if not rows:
        print("(no rows)")
        return
    width = max(len(r.what) for r in rows)
    print(f"{'what':{width}}  {'measured':>12}  {'target':>12}  met")
    for r in rows:
        target = "no target" if r.target is None else f"≤ {r.target:,g} {r.unit}"
        met = {None: "-", True: "yes", False: "NO"}[r.met]
        value = f"{r.value:,.2f}" if abs(r.value) < 10 else f"{r.value:,.1f}"
        value = "n/a" if math.isnan(r.value) else value  # not measured: the detail says why
        print(f"{r.what:{width}}  {value:>9} {r.unit:<3}{target:>13}  {met:3}  {r.detail}")
    targeted = sum(r.met is not None for r in rows)
    if targeted:
        print(f"{sum(r.met is True for r in rows)} of {targeted} targets met")
