"""Where file checkpoints are kept (a repository of the unit of work), the files they are
taken from and put back into, and what a shell command changed."""

from abc import abstractmethod
from dataclasses import dataclass
from typing import Protocol

from domain.checkpoints import FileCheckpoint, Unrestorable
from domain.message import Message
from domain.restore import UndoFile


@dataclass(frozen=True, slots=True)
class StoredUndo:
    """What the last rewind of a session cut off, kept in storage until it is undone or the
    session is rewound again: `position` is where the history was cut, `token` what the
    undo must name, `files` the files the restore wrote, as they were before it and as it
    left them."""

    token: str
    position: int
    to_message_id: str
    messages: tuple[Message, ...]
    files: tuple[UndoFile, ...] = ()


class CheckpointStore(Protocol):
    """A session's file checkpoints and their contents, deduplicated by state (digest)."""

    @abstractmethod
    async def checkpoints(self, session_id: str) -> list[FileCheckpoint]:
        """All of the session's checkpoints, oldest first."""

    @abstractmethod
    async def has(self, session_id: str, message_id: str, path: str) -> bool: ...

    @abstractmethod
    async def add(self, session_id: str, checkpoint: FileCheckpoint, content: bytes | None) -> None:
        """Record `checkpoint`; `content` (its prior bytes) is stored unless already there."""

    @abstractmethod
    async def written(self, session_id: str, message_id: str, path: str, after: str) -> None:
        """The state the agent left `path` in during the turn of `message_id`."""

    @abstractmethod
    async def content(self, session_id: str, state: str) -> bytes | None: ...

    @abstractmethod
    async def stored_bytes(self, session_id: str) -> int:
        """The bytes of content the session's checkpoints keep."""

    @abstractmethod
    async def drop(self, session_id: str, seq: int) -> None:
        """Mark a checkpoint dropped and free its content unless another one keeps it."""

    @abstractmethod
    async def keep_undo(self, session_id: str, undo: StoredUndo) -> None:
        """Store the session's rewind undo, replacing the one before it."""

    @abstractmethod
    async def undo(self, session_id: str) -> StoredUndo | None:
        """The session's stored rewind undo, if any."""

    @abstractmethod
    async def drop_undo(self, session_id: str) -> None:
        """Forget the session's rewind undo (undone)."""


class PathRefused(Exception):
    """A path a restore must not touch: outside the session's directories, or where (or on
    the way to where) something other than a regular file or a directory stands."""

    def __init__(self, path: str, reason: Unrestorable) -> None:
        super().__init__(f"{path}: {reason.value}")
        self.path = path
        self.reason = reason


class WorkspaceFiles(Protocol):
    """The regular files inside a session's `directories` (its cwd and extra directories),
    byte-exact: where checkpoints are taken from and put back into. A path is reached from
    the directory holding it one component at a time without following a symlink, so
    nothing is ever read, written or removed outside those directories. Each method raises
    PathRefused for a path outside them, or one where something else stands."""

    @abstractmethod
    async def read(self, directories: tuple[str, ...], path: str) -> bytes | None:
        """The file's bytes; None when there is no file."""

    @abstractmethod
    async def write(self, directories: tuple[str, ...], path: str, content: bytes) -> None:
        """Create or replace the file (never the file a link points to), with its missing
        parent directories; the replaced file's permission bits are kept."""

    @abstractmethod
    async def remove(self, directories: tuple[str, ...], path: str) -> None:
        """Remove the file (nothing when it is already gone)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScannedChange:
    """A file a command changed: whether it existed before, and its prior bytes when they
    are known (None while `existed`: not known, so not restorable, for `unknown`'s reason)."""

    path: str
    existed: bool
    prior: bytes | None = None
    unknown: Unrestorable = Unrestorable.PRIOR_UNKNOWN


class ScanWatch(Protocol):
    """Directories as they were before a command (with the prior bytes of the files a rewind
    could put back), to compare with after it."""

    @abstractmethod
    async def changes(self) -> tuple[ScannedChange, ...]: ...


class FileScanner(Protocol):
    """Detects the files a shell command changed in a session's directories, and what they
    held before. A snapshot before and a comparison after today; a sandbox that records
    the command's writes could answer the same."""

    @abstractmethod
    async def watch(self, directories: tuple[str, ...]) -> ScanWatch:
        """Take the 'before' snapshot (its cost bounded by the adapter)."""
