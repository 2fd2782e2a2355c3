"""What checkpointing a `bash` command costs: the snapshot of the session's directories
taken before it (stamps, and the prior bytes a rewind could put back) and the scan after
it that finds what it changed. In process, on real directories in a temporary directory.

Run by hand:  .venv/bin/python bench/checkpoint_snapshot.py [--runs 5] [--baseline REV]

Trees: a plain directory and a git repository (committed, clean), each of 1,000 and
10,000 text files of ~2 KB in 10 files a directory. Per tree, the median of `runs` of:
  - cold: the first command in a fresh process (nothing read before);
  - warm: the next command, nothing changed since (the usual case between two commands);
  - warm, 10 changed: 10 files written since the command before.
Each figure is the snapshot before plus the comparison after a command that changed
nothing (what a command pays on top of itself), as CPU time (this process's threads and
the git processes it ran: what the work costs, whatever else the machine runs) and wall
time. `--baseline REV` also measures the scanner of that revision (e.g. ffd9a9d: mtime and
size only, prior bytes from git alone), loaded from git, on the same trees, each round
alternating the two. The memory the prior-bytes store holds is printed too.
"""

import argparse
import asyncio
import importlib.util
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from adapters.workspace.file_scan import SnapshotScanner

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 50 * 2**20  # IAC_CODE_CHECKPOINT_MAX_BYTES's default
LINE = "the quick brown fox jumps over the lazy dog, again and again and again.\n"


def make_tree(top: Path, files: int, *, git: bool) -> None:
    top.mkdir()
    for n in range(files):
        directory = top / f"d{n // 10:04d}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{n}.txt").write_text(f"{n}\n" + LINE * 28)
    if git:
        run = ["git", "-C", str(top), "-c", "user.name=b", "-c", "user.email=b@example.com"]
        subprocess.run([*run, "init", "-q"], check=True)
        subprocess.run([*run, "add", "."], check=True)
        subprocess.run([*run, "commit", "-qm", "tree"], check=True)


def change(top: Path, count: int, round_: int) -> None:
    for n in range(count):
        (top / f"d{n // 10:04d}" / f"f{n}.txt").write_text(f"changed {round_}\n" + LINE * 28)


def cpu() -> float:
    """CPU seconds so far: this process (its threads) and its children that ended (git)."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def command(scanner: Any, top: Path) -> tuple[float, float]:
    """CPU and wall seconds of one command's checkpointing: the snapshot before, the scan
    after."""
    started, used = time.perf_counter(), cpu()
    watch = await scanner.watch((str(top),))
    await watch.changes()
    return cpu() - used, time.perf_counter() - started


def load_scanner(revision: str) -> Callable[[], Any]:
    """The scanner class of `revision` (adapters/workspace/file_scan.py there)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:adapters/workspace/file_scan.py"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader(f"file_scan_{revision}", loader=None)
    assert spec is not None
    module = ModuleType(spec.name)
    exec(compile(source, f"{revision}:file_scan.py", "exec"), module.__dict__)
    scanner = getattr(module, "SnapshotScanner", None) or module.MtimeScanner  # its old name
    return scanner  # type: ignore[no-any-return]


CASES = ("cold", "warm", "warm, 10 changed")


async def one_round(make: Callable[[], Any], top: Path, round_: int) -> dict[str, Any]:
    scanner = make()  # a fresh process: nothing held
    figures = {"cold": await command(scanner, top), "warm": await command(scanner, top)}
    change(top, 10, round_)
    figures["warm, 10 changed"] = await command(scanner, top)
    figures["held"] = getattr(getattr(scanner, "prior", None), "size", 0) / 2**20
    return figures


async def main(runs: int, baseline: str | None) -> None:
    scanners: dict[str, Callable[[], Any]] = {"now": lambda: SnapshotScanner(max_bytes=BUDGET)}
    if baseline:
        scanners[baseline] = load_scanner(baseline)
    print(f"{runs} rounds, medians: CPU ms / wall ms")
    with tempfile.TemporaryDirectory() as scratch:
        for git in (False, True):
            for files in (1_000, 10_000):
                top = Path(scratch) / f"{'git' if git else 'plain'}-{files}"
                make_tree(top, files, git=git)
                rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in scanners}
                for round_ in range(runs):
                    for name, make in scanners.items():
                        rounds[name].append(await one_round(make, top, round_))
                for name, taken in rounds.items():
                    print(row("git repository" if git else "plain directory", files, name, taken))


def row(kind: str, files: int, name: str, taken: list[dict[str, Any]]) -> str:
    shown = []
    for case in CASES:
        used = statistics.median(t[case][0] for t in taken) * 1000
        wall = statistics.median(t[case][1] for t in taken) * 1000
        shown.append(f"{case} {used:6.1f} / {wall:6.1f}")
    held = max(t["held"] for t in taken)
    return f"{kind:15} {files:6} files  {name:8} " + "   ".join(shown) + f"   held {held:4.1f} MiB"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default=None, help="a revision whose scanner to compare")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.baseline))
