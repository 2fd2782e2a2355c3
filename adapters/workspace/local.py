"""This machine's files and processes: what every tool did before editors could lend theirs."""

import asyncio
from pathlib import Path

from adapters.workspace.commands import run_process
from adapters.workspace.reading import read_excerpt
from application.ports.workspace import (
    Chunk,
    CommandRun,
    Excerpt,
    PathKind,
    Show,
    Window,
    Workspace,
    WorkspaceError,
)
from domain.text import is_binary, shown


def _kind(path: Path) -> PathKind:
    if path.is_file():
        return PathKind.FILE
    if path.is_dir():
        return PathKind.DIRECTORY
    return PathKind.OTHER if path.exists() else PathKind.MISSING


def _read_text(path: Path) -> str | None:
    if not path.is_file():  # FIFOs, devices and sockets could block or never end
        return None
    data = path.read_bytes()
    if is_binary(data[:8192]):
        raise WorkspaceError(f"{path} is a binary file ({len(data)} bytes); not shown.")
    return data.decode("utf-8", errors="replace")


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _list_dir(path: Path) -> tuple[str, ...]:
    if not path.is_dir():
        raise WorkspaceError(f"{shown(path)} is not a directory.")
    return tuple(shown(e.name) + ("/" if e.is_dir() else "") for e in path.iterdir())


class LocalWorkspace(Workspace):
    async def kind(self, path: str) -> PathKind:
        return _kind(Path(path))

    async def read_lines(self, path: str, start: int, end: int | None, window: Window) -> Excerpt:
        return await asyncio.to_thread(read_excerpt, Path(path), start, end, window)

    async def read_text(self, path: str) -> str | None:
        return _read_text(Path(path))

    async def write_text(self, path: str, text: str) -> None:
        _write_text(Path(path), text)

    async def list_dir(self, path: str) -> tuple[str, ...]:
        return _list_dir(Path(path))

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
        return await run_process(
            command, cwd=cwd, seconds=seconds, output_limit=output_limit, chunk=chunk
        )
