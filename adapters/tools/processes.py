"""The process groups the tools start, tied to this server's life.

Each bash command runs in its own process group (its own session). Two things keep a group
from outliving the server:

- `stop_all_process_groups()` kills every live group; the server calls it when it is told
  to stop (SIGTERM, SIGINT).
- Nothing can run code when the server is SIGKILLed, so each group carries its own
  watchman: a background shell in the group blocks reading a pipe whose only writer is
  this process. When the server dies, however it dies, the kernel closes that end, the read
  returns, and the watchman kills its whole group (`kill -KILL 0`), grandchildren included.
  A pipe rather than PR_SET_PDEATHSIG: the death signal fires when the *thread* that forked
  the child exits, and reaches only the direct child, not the group.

A process that leaves the group on purpose (setsid, or a daemon that double-forks into a new
session) escapes both, as it would escape a terminal closing.
"""

import contextlib
import os
import signal
from pathlib import Path

# The launcher: keep the pipe's read end (stdin) as fd 3 for the watchman, give the command
# /dev/null as stdin and no fd 3, and exec it so the direct child is the command's shell.
LAUNCHER = (
    "exec 3<&0 </dev/null; "
    "{ read -r -u 3 _; kill -KILL 0; } >/dev/null 2>&1 & "
    'exec 3<&-; exec /bin/bash -c "$1"'
)

_live: dict[int, int] = {}  # process group id -> write end of its watchman's pipe


def launch_arguments(command: str) -> tuple[str, ...]:
    return ("/bin/bash", "-c", LAUNCHER, "iac-code-tool", command)


def watch_pipe() -> tuple[int, int]:
    """(read end for the child's stdin, write end the server keeps). Neither is inherited
    by other children: only this child gets the read end, as its stdin."""
    return os.pipe()


def register(group: int, writer: int) -> None:
    _live[group] = writer


def release(group: int) -> None:
    """Forget a group that is gone; closing the pipe would stop it if it were not."""
    writer = _live.pop(group, None)
    if writer is not None:
        with contextlib.suppress(OSError):
            os.close(writer)


def signal_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def stop_all_process_groups() -> int:
    """SIGKILL every live tool process group; safe to call from a signal handler. Returns
    how many groups were signalled."""
    groups = list(_live)
    for group in groups:
        signal_group(group, signal.SIGKILL)
    return len(groups)


def group_alive(group: int) -> bool:
    """Whether any process of the group still runs. Zombies do not count: in a container
    whose init does not reap, an orphan's zombie stays for ever, but it does nothing."""
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
