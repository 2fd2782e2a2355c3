"""This machine's files, byte-exact: where file checkpoints are read and restored, only
inside the session's directories and never through a symlink (confined.py)."""

import asyncio

from adapters.workspace import confined
from application.ports.checkpoints import WorkspaceFiles


class DiskFiles(WorkspaceFiles):
    async def read(self, directories: tuple[str, ...], path: str) -> bytes | None:
        return await asyncio.to_thread(confined.read, directories, path)

    async def write(self, directories: tuple[str, ...], path: str, content: bytes) -> None:
        await asyncio.to_thread(confined.write, directories, path, content)

    async def remove(self, directories: tuple[str, ...], path: str) -> None:
        await asyncio.to_thread(confined.remove, directories, path)
