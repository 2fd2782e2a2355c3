"""The bubblewrap command line that confines one command to its session.

What the command sees is built up from nothing, not taken from the server's view and
trimmed: the system's read-only directories (`/usr`, `/etc`, `/opt` and the top-level links
into `/usr`), a fresh `/dev`, `/proc` and private `/tmp`, an empty writable `$HOME`, and the
session's own directories (writable at `workspace-write`). Everything else — other
sessions' workspaces, the server's configuration, database and logs, `/root`, `/home`,
`/srv`, `/run` and its sockets — is simply not there. What would still show through (the
server's own files inside a session's directory, the files under `/etc` that only their
owner may read) is covered over.
"""

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from adapters.workspace.worktrees import linked_repository
from domain.sandbox import NetworkLevel, SandboxPolicy

SYSTEM_DIRECTORIES = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt")
HOSTNAME = "iac-code-sandbox"


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """What this server's sandboxes are made of (the same for every command)."""

    bwrap: str  # the program's path
    home: str  # $HOME inside: an empty private directory at the server's own $HOME path
    hidden: tuple[str, ...] = ()  # the server's own paths, covered wherever they show
    secret_files: tuple[str, ...] = ()  # files under /etc others may not read
    secret_directories: tuple[str, ...] = ()


def system_entries(root: str = "/") -> list[str]:
    """bwrap arguments for the system's directories: bound read-only, or for a top-level
    link into /usr (a merged-/usr system) the same link."""
    arguments: list[str] = []
    for name in SYSTEM_DIRECTORIES:
        path = os.path.join(root, name)
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), f"/{name}"]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, f"/{name}"]
    return arguments


def owner_only(top: str = "/etc") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(files, directories) under `top` that other users may not read (`/etc/shadow`, ssh
    host keys): a server running as root would otherwise show them to its commands, which
    run as root too, without any capability but still the files' owner."""
    files: list[str] = []
    directories: list[str] = []
    for current, subdirectories, names in os.walk(top):
        kept = []
        for name in subdirectories:
            path = os.path.join(current, name)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode) and not info.st_mode & stat.S_IROTH:
                directories.append(path)
            else:
                kept.append(name)
        subdirectories[:] = kept
        for name in names:
            path = os.path.join(current, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                files.append(path)
    return tuple(files), tuple(directories)


def _inside(path: str, directories: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _covers(layout: Layout, directories: Sequence[str]) -> list[str]:
    """Cover the server's own files where a session's directory would show them (a file
    inside a covered directory is gone with it: nothing is left to cover there)."""
    shown = [p for p in layout.hidden if _inside(p, directories)]
    folders = [p for p in shown if os.path.isdir(p)]
    outer = [d for d in folders if not any(_inside(d, [o]) and d != o for o in folders)]
    arguments: list[str] = []
    for path in outer:
        arguments += ["--tmpfs", path]
    for path in shown:
        if path not in folders and os.path.lexists(path) and not _inside(path, outer):
            arguments += ["--ro-bind", "/dev/null", path]
    for path in outer:
        arguments += ["--remount-ro", path]
    return arguments


# Inside an `allowlist` sandbox: the egress proxy's socket, the forwarder that serves it on
# 127.0.0.1, and the variables that make HTTP clients use it.
EGRESS_DIRECTORY = "/run/iac-code"
EGRESS_SOCKET = f"{EGRESS_DIRECTORY}/proxy.sock"
FORWARDER = f"{EGRESS_DIRECTORY}/forwarder.py"
PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


@dataclass(frozen=True, slots=True, kw_only=True)
class Egress:
    """What an `allowlist` sandbox is given: the server's proxy socket, the forwarder
    script and the interpreter that runs it (its installation bound read-only)."""

    socket: str
    forwarder: str
    python: str
    python_home: str


def _egress(egress: Egress) -> list[str]:
    arguments = ["--ro-bind", egress.python_home, egress.python_home]
    arguments += ["--bind", egress.socket, EGRESS_SOCKET, "--ro-bind", egress.forwarder, FORWARDER]
    for name in PROXY_VARIABLES:
        arguments += ["--setenv", name, PROXY_URL]
    return [*arguments, "--setenv", "NO_PROXY", "", "--setenv", "no_proxy", ""]


def egress_shell(egress: Egress) -> list[str]:
    """The shell that starts the forwarder (returning once it listens), then the command
    (given after these, as the script's $1)."""
    script = (
        f"{egress.python} -I -S {FORWARDER} {PROXY_PORT} {EGRESS_SOCKET} || "
        '{ echo "iac-code: the sandbox\'s proxy could not start" >&2; exit 125; }; '
        'exec /bin/bash -c "$1"'
    )
    return ["/bin/bash", "-c", script, "iac-code-sandbox"]


def bwrap_arguments(
    layout: Layout,
    policy: SandboxPolicy,
    directories: Sequence[str],
    cwd: str,
    egress: Egress | None = None,
) -> list[str]:
    """Everything before the command (`--seccomp FD` and the command are the launcher's)."""
    real = [os.path.realpath(d) for d in directories]
    arguments = [
        layout.bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--hostname",
        HOSTNAME,
    ]
    if policy.network is not NetworkLevel.FULL:
        arguments.append("--unshare-net")
    arguments += system_entries()
    for path in layout.secret_files:
        arguments += ["--ro-bind", "/dev/null", path]
    for path in layout.secret_directories:
        arguments += ["--tmpfs", path, "--remount-ro", path]
    arguments += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    arguments += ["--tmpfs", layout.home, "--setenv", "HOME", layout.home]
    anchors = _anchors(real, ("/tmp", "/var/tmp", layout.home))
    for anchor in anchors:
        arguments += ["--tmpfs", anchor]
    bind = "--bind-try" if policy.writes_workspace else "--ro-bind-try"
    for directory in real:
        arguments += [bind, directory, directory]
    arguments += _repositories(real, bind)
    arguments += _covers(layout, real)
    if egress is not None:
        arguments += _egress(egress)
    for anchor in anchors:
        arguments += ["--remount-ro", anchor]
    arguments += ["--remount-ro", "/", "--chdir", os.path.realpath(cwd)]
    return arguments


def _repositories(directories: Sequence[str], bind: str) -> list[str]:
    """A session working in a linked worktree commits into its repository's git directory:
    bound as the workspace is, but for what git runs or reads as settings (hooks, config),
    read-only: a command must not leave behind what the user's own git would run later."""
    arguments: list[str] = []
    seen: set[str] = set()
    for directory in directories:
        found = linked_repository(directory)
        if found is None or found[0] in seen:
            continue
        common = found[0]
        seen.add(common)
        arguments += [bind, common, common]
        for name in ("hooks", "config", "info"):
            path = os.path.join(common, name)
            arguments += ["--ro-bind-try", path, path]
    return arguments


def _anchors(directories: Sequence[str], writable: Sequence[str]) -> list[str]:
    """Where a session's directory lies inside a writable area (/tmp, the home), the first
    directory below that area on its way: covered with a tmpfs made read-only once the
    session's directories are bound in it. Otherwise `../x` from a workspace in /tmp would
    be written to the private /tmp, and lost, instead of refused."""
    found: list[str] = []
    for directory in directories:
        for area in writable:
            top = area.rstrip("/")
            if directory.startswith(top + "/"):
                anchor = top + "/" + directory[len(top) + 1 :].split("/")[0]
                # A session directory right in the area is its own anchor: left writable
                # (`..` from it reaches only the private area, lost with it).
                if anchor not in found and anchor not in directories:
                    found.append(anchor)
    return found
