"""What git knows of a directory's files before a command: which tracked files are clean
(their prior bytes are then git's index's, not read) and which files git ignores (not
read). Three git calls; none when the directory is in no repository but the first."""

import os
import subprocess
from dataclasses import dataclass

GIT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Repository:
    top: str  # the work tree's real path
    clean: frozenset[str]  # tracked files (relative to top) unchanged before the command
    ignored: frozenset[str]  # ignored files, and ignored directories with a trailing "/"

    def relative(self, real: str) -> str | None:
        """`real` relative to the work tree (with "/"), or None outside it."""
        prefix = self.top.rstrip(os.sep) + os.sep
        if not real.startswith(prefix):
            return None
        return real[len(prefix) :].replace(os.sep, "/")

    def ignores(self, relative: str) -> bool:
        if relative in self.ignored:
            return True
        parts = relative.split("/")
        return any("/".join(parts[:n]) + "/" in self.ignored for n in range(1, len(parts)))


def repository_of(directory: str) -> Repository | None:
    top = git_bytes(directory, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    root = os.path.realpath(top.decode(errors="surrogateescape").strip())
    tracked = git_bytes(root, "ls-files", "-z")
    status = git_bytes(
        root,
        "status",
        "--porcelain=v1",
        "-z",
        "--no-renames",
        "--untracked-files=normal",
        "--ignored=matching",
    )
    if tracked is None or status is None:
        return None
    dirty: set[str] = set()
    ignored: set[str] = set()
    for entry in _entries(status):
        code, name = entry[:2], entry[3:]
        if code == "!!":
            ignored.add(name)
        elif code != "??":
            dirty.add(name)
    files = set(_entries(tracked))
    return Repository(top=root, clean=frozenset(files - dirty), ignored=frozenset(ignored))


def _entries(output: bytes) -> list[str]:
    return [name for name in output.decode(errors="surrogateescape").split("\0") if name]


def git_bytes(directory: str, *arguments: str) -> bytes | None:
    """git's stdout, or None when it fails (not a repository, no git, too slow)."""
    try:
        done = subprocess.run(
            ["git", "-C", directory, *arguments],
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
