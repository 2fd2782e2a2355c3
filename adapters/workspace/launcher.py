"""The parent of every bash command: it holds the command's whole process tree and ends it.

Run as a script (`python -I -S launcher.py COMMAND`, standard library only, not imported by
the server), with the server's watch pipe as stdin and the output pipe as stdout. It

- makes itself a child subreaper: whatever the command starts and abandons (`setsid`, a
  double fork, `nohup ... &`) is reparented to this process instead of to init, so the
  command's whole tree is always the set of this process's descendants;
- drops CAP_SYS_PTRACE (bounding, inheritable, ambient, permitted and effective sets) before
  the command runs, so that a root command cannot read the non-dumpable server's memory;
- runs the command (`/bin/bash -c`) in its own process group, stdin /dev/null; when the
  server sends a sandbox (a JSON object as the second argument: adapters.workspace.
  confinement), with the file-size and process limits set, under bubblewrap (the seccomp
  program handed to it through a pipe) or, as the fallback, confined by Landlock and the
  seccomp program here in the child before it runs the shell (adapters.workspace.landlock);
- ends the tree when the command exits (background leftovers: SIGTERM, then SIGKILL), when
  the server sends SIGTERM (cancel, timeout: SIGTERM, a grace for the shell, then SIGKILL),
  and when the server goes away however it went (its end of the watch pipe closes, or the
  parent-death signal arrives: SIGKILL at once), and exits only once no descendant is left,
  with the command's status (a command killed by a signal makes it die of the same signal).
"""

import contextlib
import ctypes
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
from types import ModuleType

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_LOWER = 3
CAP_SYS_PTRACE = 19
CAPABILITY_VERSION_3 = 0x20080522
HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD)
GRACE = 2.0  # for the shell to end on SIGTERM, as the server gave it before

_libc = ctypes.CDLL(None, use_errno=True)
_wake_read, _wake_write = os.pipe()
_asked: set[int] = set()  # signals received


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _prctl(option: int, value: int, extra: int = 0) -> bool:
    return bool(_libc.prctl(option, value, extra, 0, 0) == 0)


def _drop_ptrace() -> None:
    """Without CAP_SYS_PTRACE nothing exec'd from here gets it back: for root, what an exec
    grants is the bounding set plus the inheritable one. Each step may fail without
    CAP_SETPCAP, as for an ordinary user, who holds nothing to drop: only a setuid program
    would then get CAP_SYS_PTRACE back from the bounding set (see docs/tools.md)."""
    _prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE)
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE)
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capget(ctypes.byref(header), data) != 0:
        return
    mask = ~(1 << CAP_SYS_PTRACE) & 0xFFFFFFFF
    data[0].effective &= mask
    data[0].permitted &= mask
    data[0].inheritable &= mask
    _libc.capset(ctypes.byref(header), data)


def _on_signal(signum: int, _frame: object) -> None:
    _asked.add(signum)


def _set_limits(sandbox: dict[str, object]) -> None:
    limits = sandbox["limits"]
    assert isinstance(limits, dict)
    for name, value in limits.items():
        number = getattr(resource, name)
        resource.setrlimit(number, (int(value), int(value)))


def _wrapped(command: str, sandbox: dict[str, object]) -> list[str]:
    """bubblewrap's command line for `command`, the seccomp program handed to it through
    a pipe (this process's limits are inherited by bubblewrap and all below it)."""
    program = bytes.fromhex(str(sandbox["seccomp"]))
    reader, writer = os.pipe()  # the program fits a pipe's buffer: the write cannot block
    os.write(writer, program)
    os.close(writer)
    os.set_inheritable(reader, True)
    wrap = sandbox["wrap"]
    assert isinstance(wrap, list)
    # The shell before the command: `bash -c`, or for an allowlist a script that starts the
    # proxy's forwarder first and takes the command as its $1 (adapters.workspace.bwrap).
    shell = sandbox.get("shell", ["/bin/bash", "-c"])
    assert isinstance(shell, list)
    return [*map(str, wrap), "--seccomp", str(reader), "--", *map(str, shell), command]


def _sibling(name: str) -> ModuleType:
    """A module beside this script, loaded by its path (the server's packages are not on
    this interpreter's path: -I)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"iac_code_launcher_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _landlocked(sandbox: dict[str, object], private: str) -> None:
    """Confine this very process (the fallback: adapters/workspace/landlock.py), which then
    runs the shell itself; `private` is its own temporary directory and home."""
    landlock = _sibling("landlock")
    rules = sandbox["landlock"]
    assert isinstance(rules, dict)
    landlock.restrict(
        read=list(rules["read"]),
        write=[*rules["write"], private],
        devices=list(rules["devices"]),
        network=bool(rules["network"]),
        version=int(rules["version"]),
    )
    landlock.load_seccomp(bytes.fromhex(str(sandbox["seccomp"])))
    for name in ("HOME", "TMPDIR"):
        os.environ[name] = private


def _start(command: str, sandbox: dict[str, object] | None, private: str | None) -> int:
    child = os.fork()
    if child == 0:  # this process is single-threaded: all of this is safe after fork
        try:
            os.setpgid(0, 0)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)  # the command gets /dev/null, not the watch pipe
            os.close(null)
            # What Python ignores at start (SIGPIPE, SIGXFSZ) would stay ignored through
            # exec: `yes | head -1` would end in "Broken pipe", a file over the size limit
            # in EFBIG instead of the signal.
            for signum in (*HANDLED, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(signum, signal.SIG_DFL)
            if sandbox is None:
                os.execv("/bin/bash", ["/bin/bash", "-c", command])
            _set_limits(sandbox)
            if private is not None:
                _landlocked(sandbox, private)
                os.execv("/bin/bash", ["/bin/bash", "-c", command])
            argv = _wrapped(command, sandbox)
            os.execv(argv[0], argv)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(2, f"iac-code: the sandbox could not start: {exc}\n".encode())
        finally:
            os._exit(127)
    return child


def _descendants() -> list[int]:
    """Every live process below this one, each before its own children (zombies are passed
    through, not counted)."""
    parents: dict[int, list[tuple[int, bool]]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:
            continue
        alive = fields[0] not in (b"Z", b"X")
        parents.setdefault(int(fields[1]), []).append((int(name), alive))
    found: list[int] = []
    todo = [os.getpid()]
    while todo:  # a child is listed when its parent is taken, so after its parent
        for pid, alive in parents.get(todo.pop(), []):
            todo.append(pid)
            if alive:
                found.append(pid)
    return found


def _reap(child: int, status: list[int]) -> None:
    """Reap every exited child (the command, and orphans it left to us), keeping the
    command's status."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == child:
            status.append(code)


def _signal_all(signum: int) -> None:
    for pid in _descendants():
        with contextlib.suppress(OSError):  # gone meanwhile
            os.kill(pid, signum)


def _wait(seconds: float | None) -> bool:
    """Until a signal, the server's going away, or `seconds`; whether the server is gone."""
    poller = select.poll()
    poller.register(0, select.POLLIN)
    poller.register(_wake_read, select.POLLIN)
    events = poller.poll(None if seconds is None else seconds * 1000)
    if any(fd == _wake_read for fd, _ in events):
        os.read(_wake_read, 512)
    return any(fd == 0 for fd, _ in events) or signal.SIGHUP in _asked


def _end_tree(child: int, status: list[int]) -> None:
    """SIGKILL every descendant until none is left, reaping what is reparented to us.

    The command's own group dies first in one step, and the rest parents before children:
    a shell whose child died before it would otherwise run its next step (`sleep 60; touch
    done` finished the touch on a busy machine), and a killed process runs nothing more."""
    with contextlib.suppress(OSError):
        os.killpg(child, signal.SIGKILL)
    while True:
        _reap(child, status)
        left = _descendants()
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)  # a killed process takes a moment to die
    if not status:  # the command died (a zombie is not listed) after the last reap
        with contextlib.suppress(ChildProcessError):
            status.append(os.waitpid(child, 0)[1])


def _run(command: str, sandbox: dict[str, object] | None) -> int:
    # A Landlock command gets a temporary directory of its own (bubblewrap makes a /tmp),
    # removed with everything in it once the command's tree is gone.
    private = None
    if sandbox is not None and "landlock" in sandbox:
        private = tempfile.mkdtemp(prefix="iac-code-sandbox-")
    try:
        return _supervised(command, sandbox, private)
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


def _supervised(command: str, sandbox: dict[str, object] | None, private: str | None) -> int:
    status: list[int] = []
    child = _start(command, sandbox, private)
    gone = False
    while not status and not gone and not _asked & {signal.SIGTERM, signal.SIGINT}:
        gone = _wait(None)
        _reap(child, status)
    if not status and not gone:  # cancel or timeout: the shell gets a grace
        _signal_all(signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while not status and not gone and time.monotonic() < deadline:
            gone = _wait(max(0.0, deadline - time.monotonic()))
            _reap(child, status)
    elif status:  # it ended: what it left running in the background is stopped
        _signal_all(signal.SIGTERM)
    _end_tree(child, status)
    return status[0] if status else 0


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if signum in HANDLED:
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main() -> None:
    os.set_blocking(_wake_write, False)
    signal.set_wakeup_fd(_wake_write)
    for signum in HANDLED:
        signal.signal(signum, _on_signal)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGHUP)
    _drop_ptrace()
    sandbox = json.loads(sys.argv[2]) if len(sys.argv) > 2 else None
    _exit_like(_run(sys.argv[1], sandbox))


if __name__ == "__main__":
    main()
