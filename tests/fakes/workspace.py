"""Fakes of the Workspace ports: an in-memory workspace for every session (its files a dict;
each command recorded and ended at once, exit code 0) and the Workspaces handing it out;
and a workspace whose commands run until the test ends them (what background tasks are
tested on; its files side is not scripted: it raises)."""

import asyncio
from dataclasses import dataclass, field

from application.ports.workspace import (
    Chunk,
    CommandRun,
    Excerpt,
    PathKind,
    Show,
    Window,
    Workspace,
    Workspaces,
)
from domain.sandbox import SandboxPolicy


@dataclass
class InMemoryWorkspace(Workspace):
    files: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)

    async def kind(self, path: str) -> PathKind:
        if path in self.files:
            return PathKind.FILE
        inside = any(name.startswith(path.rstrip("/") + "/") for name in self.files)
        return PathKind.DIRECTORY if inside else PathKind.MISSING

    async def read_lines(self, path: str, start: int, end: int | None, window: Window) -> Excerpt:
        raise OSError(f"{path}: reading lines is not scripted here")

    async def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    async def write_text(self, path: str, text: str) -> None:
        self.files[path] = text

    async def list_dir(self, path: str) -> tuple[str, ...]:
        prefix = path.rstrip("/") + "/"
        return tuple(
            sorted({n[len(prefix) :].split("/")[0] for n in self.files if n.startswith(prefix)})
        )

    async def run(
        self, command: str, *, cwd: str, seconds: float, output_limit: int, chunk: Chunk, show: Show
    ) -> CommandRun:
        self.commands.append(command)
        return CommandRun(output="", exit_code=0)


@dataclass
class FakeWorkspaces(Workspaces):
    workspace: InMemoryWorkspace = field(default_factory=InMemoryWorkspace)
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    policies: list[SandboxPolicy] = field(default_factory=list)  # the sandbox each was given

    def for_session(
        self, session_id: str, directories: tuple[str, ...], sandbox: SandboxPolicy
    ) -> Workspace:
        self.asked.append((session_id, directories))
        self.policies.append(sandbox)
        return self.workspace


@dataclass
class _Command:
    chunk: Chunk
    show: Show
    exit: "asyncio.Future[CommandRun]" = field(default_factory=asyncio.Future)
    stopped: bool = False


class ScriptedWorkspace(Workspace):
    """Commands that run until the test ends them (`finish`); a cancelled one is stopped."""

    def __init__(self) -> None:
        self.commands: dict[str, _Command] = {}

    async def run(
        self, command: str, *, cwd: str, seconds: float, output_limit: int, chunk: Chunk, show: Show
    ) -> CommandRun:
        running = self.commands[command] = _Command(chunk, show)
        try:
            return await running.exit
        except asyncio.CancelledError:
            running.stopped = True
            raise

    async def finish(
        self, command: str, output: str, exit_code: int, note: str | None = None
    ) -> None:
        running = self.commands[command]
        await running.chunk(output)
        running.exit.set_result(CommandRun(output=output, exit_code=exit_code, note=note))

    async def kind(self, path: str) -> PathKind:
        raise NotImplementedError

    async def read_lines(self, path: str, start: int, end: int | None, window: Window) -> Excerpt:
        raise NotImplementedError

    async def read_text(self, path: str) -> str | None:
        raise NotImplementedError

    async def write_text(self, path: str, text: str) -> None:
        raise NotImplementedError

    async def list_dir(self, path: str) -> tuple[str, ...]:
        raise NotImplementedError
