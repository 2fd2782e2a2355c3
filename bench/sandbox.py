"""What the bubblewrap sandbox (issue 44) adds to one `bash` command: the command run
through `LocalWorkspace.run` as the bash tool runs it, unconfined and confined
(workspace-write, no network), in one event loop; the workspace is a directory inside a
temporary directory, next to a stand-in for the server's configuration (hidden from it).

Run by hand:  .venv/bin/python bench/sandbox.py [--runs 200] [--turns 5]

Measured:
  - start to exit of `true`, `runs` times each way after a few warm-up runs, the two ways
    interleaved (which goes first alternates) so the machine's noise hits both: median,
    p90 and max, and the difference of the medians (what the sandbox adds; issue 44's
    target: at most 15 ms on this machine); with the CPU the command's processes used;
  - the same `true` through the launcher alone, waited for directly: the server notices
    a launcher's end by polling every 20 ms (adapters.workspace.commands._exited), which
    rounds the figures above up to its steps and can swallow a few ms of difference;
  - a 50-command turn: 50 short commands one after another (`echo $i > f$i.txt && cat
    f$i.txt`), `turns` times each way, interleaved: the total's median, and per command
    what the sandbox adds;
  - the one-time costs: a fresh `Confinement`'s probe (`problem`: one confined `true` run
    directly by bwrap, the first confined command waits for it) and building the seccomp
    program (`refusing_filter`, cached for the process), each the first and the median of 5.
"""

import argparse
import asyncio
import datetime
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from adapters.workspace.confinement import Confinement
from adapters.workspace.local import LocalWorkspace
from adapters.workspace.processes import launch_arguments
from adapters.workspace.seccomp import refusing_filter
from application.ports.workspace import Workspace
from domain.sandbox import UNCONFINED, NetworkLevel, SandboxLevel, SandboxPolicy
from domain.tool_call import ToolOutput

CONFINED = SandboxPolicy(level=SandboxLevel.WORKSPACE_WRITE, network=NetworkLevel.NONE)
WARM_UP = 5
TURN_COMMANDS = 50
ONE_TIME_RUNS = 5
SECONDS = 60.0
OUTPUT_LIMIT = 30_000


async def chunk(text: str) -> None:
    pass


async def show(output: ToolOutput) -> None:
    pass


def children_cpu() -> float:
    """CPU seconds of this process's children that ended (the launchers and what they ran,
    bwrap and its processes included): counted exactly, not in the 20 ms steps in which
    the server sees a launcher end."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def run(workspace: Workspace, command: str, cwd: str) -> tuple[float, float]:
    """Wall seconds from the call to the command's end, through the bash tool's path, and
    the CPU seconds its processes used."""
    started, used = time.perf_counter(), children_cpu()
    ran = await workspace.run(
        command, cwd=cwd, seconds=SECONDS, output_limit=OUTPUT_LIMIT, chunk=chunk, show=show
    )
    taken = time.perf_counter() - started
    if ran.exit_code != 0:
        raise RuntimeError(f"{command!r} ended {ran.exit_code}: {ran.output} {ran.note}")
    return taken, children_cpu() - used


def launcher(sandbox: str | None, cwd: str) -> float:
    """Wall seconds of the launcher alone (`true`, confined as `sandbox` says), waited for
    directly: what the server's 20 ms poll for its end rounds up."""
    watch, keep = os.pipe()  # the launcher's watch pipe: held open, as the server holds it
    try:
        started = time.perf_counter()
        done = subprocess.run(launch_arguments("true", sandbox), stdin=watch, cwd=cwd, check=False)
        taken = time.perf_counter() - started
    finally:
        os.close(watch)
        os.close(keep)
    if done.returncode != 0:
        raise RuntimeError(f"the launcher ended {done.returncode}")
    return taken


async def turn(workspace: Workspace, cwd: str) -> float:
    started = time.perf_counter()
    for i in range(TURN_COMMANDS):
        await run(workspace, f"echo {i} > f{i}.txt && cat f{i}.txt", cwd)
    return time.perf_counter() - started


def p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def row(name: str, values: list[float], scale: float = 1000) -> str:
    median, ninety, worst = (f(values) * scale for f in (statistics.median, p90, max))
    return f"    {name:12} {median:9.2f} {ninety:9.2f} {worst:9.2f}"


def difference(figures: dict[str, list[float]]) -> float:
    """Confined less unconfined, of the medians."""
    return statistics.median(figures["confined"]) - statistics.median(figures["unconfined"])


def local_sandbox(hidden: tuple[Path, ...], cwd: str) -> str:
    """The launcher's second argument for a workspace-write command in `cwd`, as
    ConfinedWorkspace makes it."""
    return Confinement.found(hidden=hidden).launch_argument(CONFINED, (cwd,), cwd)


def timed(make: Callable[[], object]) -> float:
    started = time.perf_counter()
    make()
    return time.perf_counter() - started


def machine() -> str:
    bwrap = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, check=False)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{datetime.date.today()}, {os.cpu_count()} CPUs, kernel {os.uname().release}, "
        f"{bwrap.stdout.strip() or 'no bwrap'}, python {sys.version.split()[0]}, "
        f"load average {load}"
    )


def one_time(hidden: tuple[Path, ...]) -> list[str]:
    """The first call of each (as in a fresh server process), then the median of more."""
    filters, probes = [], []
    for _ in range(ONE_TIME_RUNS):
        refusing_filter.cache_clear()
        filters.append(timed(refusing_filter))
        fresh = Confinement.found(hidden=hidden)  # the filter is built: the probe alone
        started = time.perf_counter()
        problem = fresh.problem
        probes.append(time.perf_counter() - started)
        if problem is not None:
            raise RuntimeError(f"no sandbox here: {problem}")
    return [
        "one-time costs, ms          first    median",
        f"  seccomp program      {filters[0] * 1000:9.2f} {statistics.median(filters) * 1000:9.2f}"
        f"   ({len(refusing_filter())} bytes of BPF)",
        f"  probe (`problem`)    {probes[0] * 1000:9.2f} {statistics.median(probes) * 1000:9.2f}",
    ]


async def main(runs: int, turns: int) -> None:
    print(machine())
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "config"  # the server's own files, hidden as it hides them
        config.mkdir()
        (config / "iac-code.db").touch()
        hidden = (config, config / "iac-code.db")
        cwd = Path(scratch) / "project"
        cwd.mkdir()
        lines = one_time(hidden)
        local = LocalWorkspace(Confinement.found(hidden=hidden))
        ways = {
            "unconfined": local.under(UNCONFINED, (str(cwd),)),
            "confined": local.under(CONFINED, (str(cwd),)),
        }
        for workspace in ways.values():  # the probe and the imports: not in the figures
            for _ in range(WARM_UP):
                await run(workspace, "true", str(cwd))
        taken: dict[str, list[float]] = {name: [] for name in ways}
        used: dict[str, list[float]] = {name: [] for name in ways}
        for i in range(runs):
            for name in list(ways)[:: 1 if i % 2 == 0 else -1]:
                wall, cpu = await run(ways[name], "true", str(cwd))
                taken[name].append(wall)
                used[name].append(cpu)
        print(f"\n`true` through LocalWorkspace.run, {runs} runs each, interleaved, ms")
        print(f"  {'start to exit':14} {'median':>9} {'p90':>9} {'max':>9}")
        for name, values in taken.items():
            print(row(name, values))
        added = difference(taken)
        verdict = "met" if added * 1000 <= 15 else "NOT met"
        print(f"  the sandbox adds {added * 1000:.2f} ms (median; target ≤ 15 ms: {verdict})")
        print(f"  {'CPU used':14} {'median':>9} {'p90':>9} {'max':>9}")
        for name, values in used.items():
            print(row(name, values))
        print(f"  the sandbox adds {difference(used) * 1000:.2f} ms of CPU (median)")

        sandbox = local_sandbox(hidden, str(cwd))
        alone: dict[str, list[float]] = {"unconfined": [], "confined": []}
        for _ in range(WARM_UP):
            launcher(None, str(cwd))
            launcher(sandbox, str(cwd))
        for i in range(runs):
            for name in list(alone)[:: 1 if i % 2 == 0 else -1]:
                alone[name].append(launcher(sandbox if name == "confined" else None, str(cwd)))
        print(f"\nthe launcher alone, waited for directly, {runs} runs each, interleaved, ms")
        print(f"  {'start to exit':14} {'median':>9} {'p90':>9} {'max':>9}")
        for name, values in alone.items():
            print(row(name, values))
        print(f"  the sandbox adds {difference(alone) * 1000:.2f} ms (median)")

        totals: dict[str, list[float]] = {name: [] for name in ways}
        for i in range(turns):
            for name in list(ways)[:: 1 if i % 2 == 0 else -1]:
                totals[name].append(await turn(ways[name], str(cwd)))
        print(f"\na {TURN_COMMANDS}-command turn, {turns} turns each, interleaved, s")
        print(f"  {'total':14} {'median':>9} {'p90':>9} {'max':>9}")
        for name, values in totals.items():
            print(row(name, values, scale=1))
        more = difference(totals)
        print(
            f"  the sandbox adds {more:.2f} s a turn, "
            f"{more / TURN_COMMANDS * 1000:.2f} ms a command (medians)"
        )
        print()
        print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--turns", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.turns))
