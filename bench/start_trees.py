"""Start-up of two (or more) source trees, measured back to back: `initialize` and the
first `session/new` from spawn, over stdio, on an existing database.

Run:  .venv/bin/python bench/start_trees.py BEFORE_TREE AFTER_TREE [--runs 15]
Each tree is put first on the server's PYTHONPATH, so one virtualenv serves them all.
Export each tree (`git archive COMMIT | tar -x -C DIR`, or use a worktree) and compile it
(`python -m compileall -q adapters application domain bootstrap` in it): the sandbox sets
PYTHONDONTWRITEBYTECODE, and a tree compiled at every start measures the compiler.

Runs alternate between the trees, so a machine that gets busier or calmer meanwhile moves
every tree's figures alike. Besides the wall time from spawn, each answer's row gives the
agent process's CPU time (all threads, from /proc) the moment the answer arrived, which
other work on a loaded machine moves far less (a thread that ended before is not counted:
the server's threads live on).
"""

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import StdioAgent, load_average, median


def cpu_seconds(pid: int) -> float:
    """CPU time of the process's threads, in nanoseconds' resolution (schedstat's first
    field; /proc/PID/stat counts 10 ms ticks, too coarse for `initialize`)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread ending
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def one_start(tree: str, home: Path, cwd: Path) -> tuple[float, float, float, float, float]:
    """(initialize from spawn, CPU then, session/new from spawn, CPU then, RSS MiB then)."""
    with StdioAgent(home, cwd, {"PYTHONPATH": tree}) as agent:
        initialized = agent.since_start("initialize", {"protocolVersion": 1})
        initialize_cpu = cpu_seconds(agent.pid)
        created = agent.since_start("session/new", {"cwd": str(cwd), "mcpServers": []})
        new_cpu = cpu_seconds(agent.pid)
        rss = agent.rss_kib() / 1024
    return initialized, initialize_cpu, created, new_cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", help="source trees (repository roots)")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    trees = [str(Path(tree).resolve()) for tree in args.trees]
    print(f"load average when the runs began: {load_average()}")
    with tempfile.TemporaryDirectory() as scratch:
        home, cwd = Path(scratch) / "home", Path(scratch) / "project"
        cwd.mkdir()
        results: dict[str, list[tuple[float, ...]]] = {tree: [] for tree in trees}
        for tree in trees:  # the database created once, outside the measured runs
            one_start(tree, home, cwd)
        for _ in range(args.runs):
            for tree in trees:
                results[tree].append(one_start(tree, home, cwd))
    print(f"load average when they ended: {load_average()}")
    columns = ("initialize", "CPU then", "session/new", "CPU then", "RSS then")
    print(f"{'medians of ' + str(args.runs) + ' runs':40}" + "".join(f"{c:>13}" for c in columns))
    for tree, runs in results.items():
        cells = [median([run[i] for run in runs]) for i in range(len(columns))]
        shown = [f"{v * 1000:10.1f} ms" for v in cells[:4]] + [f"{cells[4]:9.1f} MiB"]
        print(f"{tree[-40:]:40}" + "".join(f"{cell:>13}" for cell in shown))


if __name__ == "__main__":
    main()
