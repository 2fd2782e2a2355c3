"""The files of a session's directories in memory, for the checkpoint and rewind use cases:
the WorkspaceFiles port's rules (inside the directories only; never through a symlink) with
the symlinks a test puts in place; and a scanner that reports what a test says a command
changed."""

from application.ports.checkpoints import (
    FileScanner,
    PathRefused,
    ScannedChange,
    ScanWatch,
    WorkspaceFiles,
)
from domain.checkpoints import Unrestorable


class InMemoryWorkspaceFiles(WorkspaceFiles):
    """`files`: path → bytes; `links`: paths where a symlink stands (a file's, or a
    directory's: every path below it is reached through it)."""

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})
        self.links: set[str] = set()
        self.writes: list[str] = []  # every path written or removed, in order

    async def read(self, directories: tuple[str, ...], path: str) -> bytes | None:
        self._check(directories, path)
        return self.files.get(path)

    async def write(self, directories: tuple[str, ...], path: str, content: bytes) -> None:
        self._check(directories, path)
        self.files[path] = content
        self.writes.append(path)

    async def remove(self, directories: tuple[str, ...], path: str) -> None:
        self._check(directories, path)
        self.files.pop(path, None)
        self.writes.append(path)

    def _check(self, directories: tuple[str, ...], path: str) -> None:
        if not any(path.startswith(d.rstrip("/") + "/") for d in directories):
            raise PathRefused(path, Unrestorable.OUTSIDE)
        if any(path == link or path.startswith(link + "/") for link in self.links):
            raise PathRefused(path, Unrestorable.NOT_A_FILE)


class ScriptedScan(ScanWatch):
    def __init__(self, changes: tuple[ScannedChange, ...]) -> None:
        self._changes = changes

    async def changes(self) -> tuple[ScannedChange, ...]:
        return self._changes


class ScriptedScanner(FileScanner):
    """What 'the command' changed: set before the command runs."""

    def __init__(self) -> None:
        self.next: tuple[ScannedChange, ...] = ()
        self.watched: list[tuple[str, ...]] = []

    async def watch(self, directories: tuple[str, ...]) -> ScanWatch:
        self.watched.append(directories)
        return ScriptedScan(self.next)
