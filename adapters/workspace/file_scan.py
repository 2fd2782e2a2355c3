"""What a shell command changed in a session's directories, and what those files held
before it: a snapshot taken before the command, compared with a scan after it.

- The scan walks the directories without following symlinks (SKIPPED_DIRECTORIES left out),
  taking each regular file's stamp (inode, size, mtime, ctime), at most MAX_FILES files and
  MAX_SECONDS per scan: past either bound, what lies beyond is not compared (a change there
  is not seen). A file whose stamp differs after the command was changed by it.
- The snapshot also keeps the prior bytes a rewind could put back:
  - a file git tracks, clean before the command: read from git's index only if the command
    changed it (and only when their size is the file's size before: a filtered file, e.g.
    with line endings converted, is not restorable);
  - any other text file of at most FILE_LIMIT (untracked, modified, or in a directory that
    is no repository): read before the command, through PriorBytes, which holds what an
    earlier snapshot read of files unchanged since: a command reads only the files changed
    since the one before. At most `max_bytes` of content a snapshot, and READ_SECONDS of
    reading; what lies beyond is `prior_unknown`.
  - not read: files git ignores (build output, say: `prior_unknown`), binary files
    (`binary`), files over FILE_LIMIT (`too_large`).
- A file the command created was absent before: restorable (removed on restore).
- Not seen: a change that keeps the whole stamp; told apart: nothing, so a change made by
  something else running meanwhile (a background task) is taken for the command's."""

import asyncio
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from adapters.workspace.git_state import Repository, git_bytes, repository_of
from adapters.workspace.prior_bytes import Held, PriorBytes, Stamp
from application.ports.checkpoints import FileScanner, ScannedChange, ScanWatch
from domain.checkpoints import FILE_LIMIT, Unrestorable
from domain.text import is_binary

MAX_FILES = 20_000
MAX_SECONDS = 2.0
READ_SECONDS = 2.0
SKIPPED_DIRECTORIES = frozenset({".git", "node_modules", ".venv", "__pycache__"})
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(slots=True)
class _Before:
    repositories: list[Repository]
    stamps: dict[str, Stamp] = field(default_factory=dict)
    held: dict[str, Held] = field(default_factory=dict)  # what was read, or why not


class SnapshotScanner(FileScanner):
    def __init__(self, *, max_bytes: int) -> None:
        self.prior = PriorBytes(max_bytes)

    async def watch(self, directories: tuple[str, ...]) -> ScanWatch:
        before = await asyncio.to_thread(_snapshot, directories, self.prior)
        return _Watch(directories, before)


class _Watch(ScanWatch):
    def __init__(self, directories: tuple[str, ...], before: _Before) -> None:
        self._directories = directories
        self._before = before

    async def changes(self) -> tuple[ScannedChange, ...]:
        return await asyncio.to_thread(self._compare)

    def _compare(self) -> tuple[ScannedChange, ...]:
        before = self._before.stamps
        after = {f.path: f.stamp for f in _files(self._directories)}
        changed = sorted(
            path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
        )
        return tuple(self._change(path, existed=path in before) for path in changed)

    def _change(self, path: str, *, existed: bool) -> ScannedChange:
        if not existed:
            return ScannedChange(path=path, existed=False)
        held = self._before.held.get(path)
        if isinstance(held, bytes):
            return ScannedChange(path=path, existed=True, prior=held)
        if isinstance(held, Unrestorable):
            return ScannedChange(path=path, existed=True, unknown=held)
        prior = self._from_git(os.path.realpath(path))
        if prior is not None and len(prior) != self._before.stamps[path][1]:
            prior = None  # not what the file held (git filters it, e.g. line endings)
        return ScannedChange(path=path, existed=True, prior=prior)

    def _from_git(self, real: str) -> bytes | None:
        for repository in self._before.repositories:
            relative = repository.relative(real)
            if relative is not None and relative in repository.clean:
                return git_bytes(repository.top, "show", f":{relative}")
        return None


def _snapshot(directories: tuple[str, ...], prior: PriorBytes) -> _Before:
    repositories = [r for r in (repository_of(d) for d in directories) if r is not None]
    before = _Before(repositories=repositories)
    reading = _Reading(prior)
    for found in _files(directories):
        before.stamps[found.path] = found.stamp
        source = _source(repositories, found.real) if repositories else "read"
        match source:
            case "read":
                before.held[found.path] = reading.held(found)
            case "ignored":
                before.held[found.path] = Unrestorable.PRIOR_UNKNOWN
            # "git": its index holds the prior bytes, taken if the command changes the file
    return before


def _source(repositories: list[Repository], real: str) -> Literal["git", "ignored", "read"]:
    """Where a file's prior bytes come from: git's index (a clean tracked file), nowhere
    (a file git ignores), or a read before the command."""
    for repository in repositories:
        relative = repository.relative(real)
        if relative is None:
            continue
        if relative in repository.clean:
            return "git"
        if repository.ignores(relative):
            return "ignored"
    return "read"


class _Reading:
    """The reads of one snapshot: within its byte budget and its time."""

    def __init__(self, prior: PriorBytes) -> None:
        self._prior = prior
        self._budget = prior.max_bytes
        self._deadline = time.monotonic() + READ_SECONDS

    def held(self, found: "_Found") -> Held:
        path, stamp, size = found.path, found.stamp, found.stamp[1]
        if size > FILE_LIMIT:
            return Unrestorable.TOO_LARGE
        if size > self._budget:
            return Unrestorable.PRIOR_UNKNOWN
        held = self._prior.get(path, stamp)
        if held is None:
            if time.monotonic() > self._deadline:
                return Unrestorable.PRIOR_UNKNOWN
            held = _read(found.name, found.parent, stamp)
            if held is None:
                return Unrestorable.PRIOR_UNKNOWN  # gone or changed while read
            self._prior.put(path, stamp, held)
        if isinstance(held, bytes):
            self._budget -= len(held)
        return held


def _read(name: str, parent: int, stamp: Stamp) -> Held | None:
    """The file's bytes (a binary file's: BINARY), if it still has the stamp it was seen
    with."""
    try:
        descriptor = os.open(name, READ, dir_fd=parent)
    except OSError:
        return None
    try:
        if _stamp(os.fstat(descriptor)) != stamp:  # not the regular file the walk saw
            return None
        with open(descriptor, "rb", closefd=False) as file:
            content = file.read(FILE_LIMIT + 1)
    finally:
        os.close(descriptor)
    if len(content) != stamp[1]:
        return None
    return Unrestorable.BINARY if is_binary(content[:8192]) else content


@dataclass(slots=True)  # not frozen: made for every file of every scan, at half the cost
class _Found:
    """A regular file the walk found: its path (under the directory as given), the
    directory holding it (its real path; opened: valid until the next file), its name and
    stamp."""

    path: str
    real_root: str
    parent: int
    name: str
    stamp: Stamp

    @property
    def real(self) -> str:
        return os.path.join(self.real_root, self.name)


def _files(directories: tuple[str, ...]) -> Iterator[_Found]:
    """Each regular file below the directories, not through symlinks, within the bounds."""
    deadline = time.monotonic() + MAX_SECONDS
    seen = 0
    for directory in directories:
        real_top = os.path.realpath(directory)
        for root, subdirectories, files, descriptor in os.fwalk(directory):
            subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRECTORIES]
            real_root = os.path.normpath(os.path.join(real_top, os.path.relpath(root, directory)))
            for name in files:
                if seen >= MAX_FILES or time.monotonic() > deadline:
                    return
                try:
                    status = os.stat(name, dir_fd=descriptor, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(status.st_mode):  # not symlinks, FIFOs, devices
                    seen += 1
                    path = os.path.join(root, name)
                    yield _Found(path, real_root, descriptor, name, _stamp(status))


def _stamp(status: os.stat_result) -> Stamp:
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
