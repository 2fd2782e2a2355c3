"""The process trees the tools start, tied to this server's life.

Each bash command runs under its own launcher (adapters/workspace/launcher.py), a child
subreaper: whatever the command starts, even in a new session (`setsid`) or by a double
fork, stays below the launcher, which ends that whole tree when the command exits, when it
is cancelled or times out (the server sends it SIGTERM), and when the server goes away:

- `stop_all_process_groups()` closes every launcher's watch pipe; the server calls it when
  it is told to stop (SIGTERM, SIGINT). Each launcher then SIGKILLs its tree at once.
- Nothing can run code when the server is SIGKILLed, but the kernel closes the server's end
  of each watch pipe then, however it dies, and the launcher sees it (and its parent-death
  signal) and SIGKILLs its tree.

Every process of a run also carries `IAC_CODE_TOOL_RUN=<run id>` in its environment: a
process that outlived its launcher (the command killed it) is found by it when the run ends
(`end_marked`). A process that both killed its launcher and cleared its environment
(`env -i`) escapes, as does anything started through another service (cron, a container
engine, ssh): docs/tools.md says what is and is not covered.
"""

import contextlib
import itertools
import os
import signal
import sys
import time
from pathlib import Path

LAUNCHER = Path(__file__).with_name("launcher.py")
RUN_VARIABLE = "IAC_CODE_TOOL_RUN"

_live: dict[int, int] = {}  # launcher pid -> write end of its watch pipe
_runs = itertools.count(1)


def launch_arguments(command: str, sandbox: str | None = None) -> tuple[str, ...]:
    """`sandbox`: the launcher's confinement (adapters.workspace.confinement), or None."""
    # -I: no PYTHON* variables, no user site, no cwd on the path; -S: the launcher needs
    # only the standard library, and starts faster without site.
    arguments = (sys.executable, "-I", "-S", str(LAUNCHER), command)
    return arguments if sandbox is None else (*arguments, sandbox)


def new_run_id() -> str:
    return f"{os.getpid()}-{next(_runs)}-{time.monotonic_ns()}"


def watch_pipe() -> tuple[int, int]:
    """(read end for the child's stdin, write end the server keeps). Neither is inherited
    by other children: only this child gets the read end, as its stdin."""
    return os.pipe()


def register(launcher: int, writer: int) -> None:
    _live[launcher] = writer


def release(launcher: int) -> None:
    """Forget a launcher that is gone; closing its pipe would end its tree if it were not."""
    writer = _live.pop(launcher, None)
    if writer is not None:
        with contextlib.suppress(OSError):
            os.close(writer)


def live_launchers() -> int:
    """How many commands run under a launcher this process registered."""
    return len(_live)


def stop_all_process_groups() -> int:
    """Make every launcher SIGKILL its command's tree, by closing its watch pipe; safe to
    call from a signal handler. Returns how many commands were running."""
    launchers = list(_live)
    for launcher in launchers:
        release(launcher)
    return len(launchers)


def marked(run_id: str) -> set[int]:
    """The live processes that carry this run's marker in their environment."""
    needle = f"{RUN_VARIABLE}={run_id}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        if needle in environ.split(b"\0"):
            found.add(int(entry.name))
    return found


def end_marked(run_id: str, rounds: int = 100) -> int:
    """SIGKILL what of a run is still alive after its launcher is gone; how many there were."""
    ended = 0
    for _ in range(rounds):
        left = marked(run_id)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ended += len(left)
        time.sleep(0.005)  # a killed process takes a moment to die (and a zombie has no environ)
    return ended


def group_alive(group: int) -> bool:
    """Whether any process of the process group still runs (the tests ask it of a command's
    group). Zombies do not count: in a container whose init does not reap, an orphan's
    zombie stays for ever, but it does nothing."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):  # none left, or none we could stop
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if entry.name.isdigit() and _running_member(entry / "stat", group):
            return True
    return False


def _running_member(stat: Path, group: int) -> bool:
    try:
        fields = stat.read_text().rpartition(")")[2].split()
    except OSError:
        return False
    # after the command name: state, ppid, pgrp, ...
    return len(fields) > 2 and fields[2] == str(group) and fields[0] not in ("Z", "X")
