"""Where file checkpoints are kept (a repository of the unit of work), and the files they
are taken from and put back into."""

from abc import abstractmethod
from dataclasses import dataclass
from typing import Protocol

from domain.checkpoints import FileCheckpoint
from domain.message import Message


@dataclass(frozen=True, slots=True)
class StoredUndo:
    """What the last rewind of a session cut off, kept in storage until it is undone or the
    session is rewound again: `position` is where the history was cut, `token` what the
    undo must name, `files` the restored files as they were before it (None: no file)."""

    token: str
    position: int
    to_message_id: str
    messages: tuple[Message, ...]
    files: tuple[tuple[str, bytes | None], ...] = ()


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


class FileBytes(Protocol):
    """The files on this machine, byte-exact (checkpoints are taken and restored here)."""

    @abstractmethod
    async def read(self, path: str) -> bytes | None:
        """The file's bytes; None when there is no file."""

    @abstractmethod
    async def write(self, path: str, content: bytes) -> None:
        """Create or overwrite, with missing parent directories."""

    @abstractmethod
    async def remove(self, path: str) -> None:
        """Remove the file (nothing when it is already gone)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScannedChange:
    """A file a command changed: whether it existed before, and its prior bytes when they
    are known (None while `existed`: not known, so not restorable)."""

    path: str
    existed: bool
    prior: bytes | None = None


class ScanWatch(Protocol):
    """Directories as they were before a command, to compare with after it."""

    @abstractmethod
    async def changes(self) -> tuple[ScannedChange, ...]: ...


class FileScanner(Protocol):
    """Detects the files a shell command changed in a session's directories."""

    @abstractmethod
    async def watch(self, directories: tuple[str, ...]) -> ScanWatch:
        """Take the 'before' snapshot."""
