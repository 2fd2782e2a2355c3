"""This machine's files and processes: what every tool did before editors could lend theirs."""

import asyncio
from dataclasses import replace
from pathlib import Path

from adapters.workspace.blocked import blocked_note
from adapters.workspace.commands import run_process
from adapters.workspace.confinement import Confinement, SandboxUnavailable
from adapters.workspace.egress import EgressProxy
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
from domain.sandbox import NetworkLevel, SandboxPolicy
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
    """This machine's files and commands. `confinement`: how this server confines a
    session's commands (`under`); None: it cannot, and a confined policy runs nothing."""

    def __init__(
        self, confinement: Confinement | None = None, egress: EgressProxy | None = None
    ) -> None:
        self._confinement = confinement
        self._egress = egress

    def under(self, policy: SandboxPolicy, directories: tuple[str, ...]) -> Workspace:
        """This workspace for a session whose commands run under `policy`."""
        if not policy.confined:
            return self
        return ConfinedWorkspace(self._confinement, policy, directories, self._egress)

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


class ConfinedWorkspace(LocalWorkspace):
    """This machine's files, with its commands confined to a session's directories: what
    `LocalWorkspace.under` gives. The files the agent reads and writes through its own
    tools are checked elsewhere (adapters.workspace.confined); this confines the shell."""

    def __init__(
        self,
        confinement: Confinement | None,
        policy: SandboxPolicy,
        directories: tuple[str, ...],
        egress: EgressProxy | None = None,
    ) -> None:
        super().__init__(confinement, egress)
        self._policy = policy
        self._directories = directories

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
        socket = None
        if self._policy.network is NetworkLevel.ALLOWLIST:
            if self._egress is None:
                raise WorkspaceError("This server has no egress proxy: the command did not run.")
            socket = await self._egress.socket_path()
        sandbox = await asyncio.to_thread(self._launch_argument, cwd, socket)
        ran = await run_process(
            command,
            cwd=cwd,
            seconds=seconds,
            output_limit=output_limit,
            chunk=chunk,
            sandbox=sandbox,
        )
        note = blocked_note(self._policy, self._directories, ran.output, ran.exit_code)
        return ran if note is None else replace(ran, note=note)

    def _launch_argument(self, cwd: str, socket: str | None) -> str:
        """How to confine the command (in a thread: the first asks bubblewrap whether it
        works here); fails closed (WorkspaceError, nothing runs)."""
        confinement = self._confinement
        if confinement is None:
            raise WorkspaceError("This server has no sandbox: the command did not run.")
        problem = confinement.problem
        if problem is not None:
            raise WorkspaceError(
                f"The sandbox cannot start on this machine ({problem}); the command did not "
                "run. The operator can install bubblewrap, or allow the `off` sandbox level."
            )
        try:
            return confinement.launch_argument(self._policy, self._directories, cwd, socket)
        except SandboxUnavailable as exc:
            message = f"The sandbox cannot start ({exc}); the command did not run."
            raise WorkspaceError(message) from None
