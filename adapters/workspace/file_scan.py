"""What a shell command changed in a session's directories: an mtime+size scan before and
after it, with git's index for the prior bytes of the files it changed.

- The scan walks the directories (skipping SKIPPED_DIRECTORIES and symlinks), at most
  MAX_FILES files and MAX_SECONDS per scan: past either bound, what lies beyond is not
  compared (a change there is not seen).
- A file the command created was absent before: restorable (removed on restore).
- A file it changed or deleted is restorable when git tracks it and it was clean before
  the command (`git status` listed it not): its prior bytes are then the index's. Any other
  (untracked, or already changed before the command) is recorded as not restorable.
- Git's prior bytes are used only when their size is the file's size before the command
  (a filtered file, e.g. with line endings converted, is not restorable).
- A change that keeps both mtime and size (within the clock's resolution) is not seen, nor
  one made by something else running meanwhile told apart from the command's."""

import asyncio
import os
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from application.ports.checkpoints import FileScanner, ScannedChange, ScanWatch

MAX_FILES = 20_000
MAX_SECONDS = 2.0
GIT_SECONDS = 5.0
SKIPPED_DIRECTORIES = frozenset({".git", "node_modules", ".venv", "__pycache__"})

Stamp = tuple[int, int]  # (mtime in ns, size)


@dataclass(slots=True)
class _Repository:
    top: Path
    clean: frozenset[str]  # tracked files (relative to top) unchanged before the command


@dataclass(slots=True)
class _Snapshot:
    stamps: dict[str, Stamp] = field(default_factory=dict)
    repositories: list[_Repository] = field(default_factory=list)


class MtimeScanner(FileScanner):
    async def watch(self, directories: tuple[str, ...]) -> ScanWatch:
        snapshot = await asyncio.to_thread(_snapshot, directories)
        return _Watch(directories, snapshot)


class _Watch(ScanWatch):
    def __init__(self, directories: tuple[str, ...], before: _Snapshot) -> None:
        self._directories = directories
        self._before = before

    async def changes(self) -> tuple[ScannedChange, ...]:
        return await asyncio.to_thread(self._compare)

    def _compare(self) -> tuple[ScannedChange, ...]:
        before = self._before.stamps
        after = _stamps(self._directories)
        changed = sorted(
            path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
        )
        return tuple(self._change(path, existed=path in before) for path in changed)

    def _change(self, path: str, *, existed: bool) -> ScannedChange:
        if not existed:
            return ScannedChange(path=path, existed=False)
        prior = self._from_git(Path(os.path.realpath(path)))
        if prior is not None and len(prior) != self._before.stamps[path][1]:
            prior = None  # not what the file held (git filters it, e.g. line endings)
        return ScannedChange(path=path, existed=True, prior=prior)

    def _from_git(self, path: Path) -> bytes | None:
        for repository in self._before.repositories:
            if not path.is_relative_to(repository.top):
                continue
            relative = path.relative_to(repository.top).as_posix()
            if relative in repository.clean:
                return _git_bytes(repository.top, "show", f":{relative}")
        return None


def _snapshot(directories: tuple[str, ...]) -> _Snapshot:
    repositories = [r for r in (_repository(Path(d)) for d in directories) if r is not None]
    return _Snapshot(stamps=_stamps(directories), repositories=repositories)


def _stamps(directories: tuple[str, ...]) -> dict[str, Stamp]:
    stamps: dict[str, Stamp] = {}
    deadline = time.monotonic() + MAX_SECONDS
    for directory in directories:
        for root, subdirectories, files in os.walk(directory):
            subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRECTORIES]
            for name in files:
                if len(stamps) >= MAX_FILES or time.monotonic() > deadline:
                    return stamps
                path = os.path.join(root, name)
                try:
                    status = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(status.st_mode):  # not symlinks, FIFOs, devices
                    stamps[path] = (status.st_mtime_ns, status.st_size)
    return stamps


def _repository(directory: Path) -> _Repository | None:
    top = _git_bytes(directory, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    root = Path(top.decode().strip())
    tracked = _git_bytes(root, "ls-files", "-z")
    dirty = _git_bytes(
        root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames"
    )
    if tracked is None or dirty is None:
        return None
    changed = {entry[3:] for entry in dirty.decode(errors="surrogateescape").split("\0") if entry}
    files = {name for name in tracked.decode(errors="surrogateescape").split("\0") if name}
    return _Repository(top=root, clean=frozenset(files - changed))


def _git_bytes(directory: Path, *arguments: str) -> bytes | None:
    """git's stdout, or None when it fails (not a repository, no git, too slow)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *arguments],
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
