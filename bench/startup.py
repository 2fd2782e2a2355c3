"""Startup benchmark: process start -> `initialize` answered -> `session/new` answered.

Run by hand (not in CI):  .venv/bin/python bench/startup.py [--runs 15]
Prints medians and worst cases for a fresh database (first start, migrations run) and an
existing one, plus RSS when `initialize` is answered (VmRSS and the peak so far, VmHWM).
Uses the offline demo provider unless --provider anthropic (a dummy key, no request is sent).
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

IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"


def rss_kib(pid: int) -> tuple[int, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def one_run(config_dir: Path, workdir: Path, provider: str) -> dict[str, float]:
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(config_dir),
        "IAC_CODE_PROVIDER": provider,
        "IAC_CODE_API_KEY": "bench-dummy-key",
        "IAC_CODE_LOG_LEVEL": "WARNING",
    }
    start = time.perf_counter()
    process = subprocess.Popen(
        [IAC_CODE, "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=workdir,
    )
    assert process.stdin
    assert process.stdout

    def call(request_id: int, method: str, params: dict) -> float:
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert "result" in reply, reply
        return time.perf_counter() - start

    initialized = call(0, "initialize", {"protocolVersion": 1})
    rss, hwm = rss_kib(process.pid)
    created = call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
    process.stdin.close()
    process.wait(timeout=10)
    return {
        "initialize_ms": initialized * 1000,
        "session_new_ms": created * 1000,
        "rss_mib": rss / 1024,
        "peak_rss_mib": hwm / 1024,
    }


def summarise(label: str, runs: list[dict[str, float]]) -> None:
    print(f"\n{label} ({len(runs)} runs)")
    for key in runs[0]:
        values = sorted(r[key] for r in runs)
        print(f"  {key:15} median {statistics.median(values):8.1f}   worst {values[-1]:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--provider", default="demo", choices=["demo", "anthropic"])
    args = parser.parse_args()
    print(
        f"iac-code startup, provider={args.provider}, {os.cpu_count()} CPUs, "
        f"python {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "project"
        workdir.mkdir()
        fresh = [one_run(Path(tmp) / f"fresh{i}", workdir, args.provider) for i in range(args.runs)]
        existing_dir = Path(tmp) / "existing"
        one_run(existing_dir, workdir, args.provider)
        existing = [one_run(existing_dir, workdir, args.provider) for _ in range(args.runs)]
    summarise("fresh database (first start: schema migrated)", fresh)
    summarise("existing database", existing)


if __name__ == "__main__":
    main()
