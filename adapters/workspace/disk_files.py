"""This machine's files, byte-exact: where file checkpoints are read and restored."""

import asyncio
from pathlib import Path

from application.ports.checkpoints import FileBytes


class DiskFiles(FileBytes):
    async def read(self, path: str) -> bytes | None:
        return await asyncio.to_thread(_read, Path(path))

    async def write(self, path: str, content: bytes) -> None:
        await asyncio.to_thread(_write, Path(path), content)

    async def remove(self, path: str) -> None:
        await asyncio.to_thread(Path(path).unlink, missing_ok=True)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
