"""Every process a test starts dies with the test session, however the session ends.

A test's server outliving an aborted run (Ctrl-C, INTERNALERROR, a killed xdist worker) keeps
its port, its database and a core busy, and the next run on a busy machine pays for it. So
each child is started:

* with PR_SET_PDEATHSIG: the kernel signals it the moment the process that started it dies,
  even by SIGKILL, when no Python code of ours runs any more;
* as the leader of its own process group, so that a finaliser reaches whatever it started in
  turn (nginx's workers) with one killpg, and a Ctrl-C meant for pytest does not reach it
  half-way through a test;
* remembered until it is reaped, and killed (with its group) by an atexit finaliser and by
  `stop_leftovers`, which tests/conftest.py calls when the session finishes.

Linux only, as the suite is.
"""

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)

# Started and not known to be reaped: Popen or asyncio Process objects, by pid.
_started: dict[int, "subprocess.Popen[Any] | asyncio.subprocess.Process"] = {}


def _dying_with(parent: int, death_signal: int) -> Callable[[], None]:
    """Runs in the child between fork and exec (only async-signal-safe work: one prctl)."""

    def arrange() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, int(death_signal))
        if os.getppid() != parent:  # the parent died before prctl: nobody would signal us
            os._exit(1)

    return arrange


def tied(death_signal: int = signal.SIGKILL) -> dict[str, Any]:
    """Keyword arguments for subprocess.Popen or asyncio.create_subprocess_exec that make the
    child die with this process. `death_signal`: what it gets then (SIGTERM for a server
    that must take its own children down, as nginx's master does)."""
    options: dict[str, Any] = {"process_group": 0}
    # The death signal follows the *thread* that forked: a child started from a thread
    # that ends would be killed at once. Only the main thread lives as long as the session.
    if threading.current_thread() is threading.main_thread():
        options["preexec_fn"] = _dying_with(os.getpid(), death_signal)
    return options


def start(
    argv: Sequence[str], death_signal: int = signal.SIGKILL, **popen: Any
) -> "subprocess.Popen[Any]":
    """subprocess.Popen(argv, **popen), tied to the session (see the module's docstring)."""
    process: subprocess.Popen[Any] = subprocess.Popen(argv, **tied(death_signal), **popen)
    _remember(process)
    return process


async def start_async(
    argv: Sequence[str], death_signal: int = signal.SIGKILL, **options: Any
) -> asyncio.subprocess.Process:
    """asyncio.create_subprocess_exec(*argv, **options), tied to the session."""
    process = await asyncio.create_subprocess_exec(*argv, **tied(death_signal), **options)
    _remember(process)
    return process


def _remember(process: "subprocess.Popen[Any] | asyncio.subprocess.Process") -> None:
    for pid, earlier in list(_started.items()):  # forget the reaped: the dict stays small
        if not _running(earlier):
            _started.pop(pid, None)
    _started[process.pid] = process


def _running(process: "subprocess.Popen[Any] | asyncio.subprocess.Process") -> bool:
    if isinstance(process, subprocess.Popen):
        return process.poll() is None
    return process.returncode is None


def stop_leftovers() -> list[int]:
    """SIGKILL the group of every child still running; returns their pids. A reaped
    child's pid may belong to someone else by now, so it is only forgotten."""
    stopped = []
    for pid, process in list(_started.items()):
        del _started[pid]
        if not _running(process):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        stopped.append(pid)
    return stopped


atexit.register(stop_leftovers)
