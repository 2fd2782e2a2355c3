"""The files and commands a session's tools work on: this machine's, or those of the editor
the session runs in (its unsaved buffers, its terminals)."""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from domain.sandbox import SandboxPolicy
from domain.tool_call import ToolOutput


class WorkspaceError(Exception):
    """The workspace could not do what was asked (e.g. the editor answered with an error);
    the message is for the model."""


class PathKind(StrEnum):
    FILE = "file"
    DIRECTORY = "directory"
    OTHER = "other"  # FIFOs, devices, sockets: never read
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Window:
    lines: int  # most lines one read returns
    chars: int  # most characters of file text one read returns (also caps one line)


@dataclass(frozen=True, slots=True)
class Excerpt:
    lines: tuple[str, ...]  # numbered, ready to show
    last: int  # number of the last line shown (start - 1 when none)
    total: int | None  # lines in the file, when known
    size: int | None  # bytes, when known
    capped: bool  # stopped by the window, not by end_line or the end of the file
    window: Window

    def render(self, start: int, end: int | None) -> str:
        if self.total == 0:
            return "(empty file)"
        if not self.lines:
            if self.total is None:
                return f"(start_line {start} is past the end of the file)"
            return f"(start_line {start} is past the end: the file has {self.total} lines)"
        body = "\n".join(self.lines)
        if self.total is not None:
            of = f"{self.total}"
        elif self.size is not None:
            of = f"more (the file has {self.size} bytes)"
        else:
            of = "more"
        if self.capped:
            return (
                f"{body}\n[... lines {start}-{self.last} of {of} shown; one call returns at most "
                f"{self.window.lines} lines and {self.window.chars} characters: continue with "
                f"start_line={self.last + 1}]"
            )
        if start > 1 or self.last != self.total:
            return (
                f"{body}\n[... lines {start}-{self.last} of {of} shown; "
                "read more with start_line/end_line]"
            )
        return body


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRun:
    """How a command ended."""

    output: str  # stdout and stderr together, bounded (head and tail kept, or the tail)
    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    truncated: bool = False
    note: str | None = None  # what the sandbox stopped, for the model and the user


Chunk = Callable[[str], Awaitable[None]]  # live output, as it comes
Show = Callable[[ToolOutput], Awaitable[None]]  # something the user should see at once


class Workspace(Protocol):
    """One session's files and commands. Paths are absolute. File errors raise OSError or
    WorkspaceError; a cancelled `run` stops its command before the cancellation ends."""

    @abstractmethod
    async def kind(self, path: str) -> PathKind: ...

    @abstractmethod
    async def read_lines(self, path: str, start: int, end: int | None, window: Window) -> Excerpt:
        """Lines `start`..`end` (1-based, inclusive; None: to the end) within `window`."""

    @abstractmethod
    async def read_text(self, path: str) -> str | None:
        """The whole text, or None when there is no such file."""

    @abstractmethod
    async def write_text(self, path: str, text: str) -> None:
        """Create or overwrite (with missing parent directories)."""

    @abstractmethod
    async def list_dir(self, path: str) -> tuple[str, ...]:
        """Entry names, directories with a trailing '/'."""

    @abstractmethod
    async def run(
        self,
        command: str,
        *,
        cwd: str,
        seconds: float,
        output_limit: int,
        chunk: Chunk,
        show: Show,
    ) -> CommandRun:
        """Run `command` through a shell; stopped when out of `seconds`."""


class Workspaces(Protocol):
    @abstractmethod
    def for_session(
        self, session_id: str, directories: tuple[str, ...], sandbox: SandboxPolicy
    ) -> Workspace:
        """The workspace of a session working in `directories` (cwd first), whose commands
        on this machine run under `sandbox` (an editor's terminal runs them its own way)."""
