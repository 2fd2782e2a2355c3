"""The editor's files and terminals, over ACP (`fs/*`, `terminal/*`), where the client
advertised them in `initialize`; this machine's otherwise.

Every call asks the room (through application.ports.clients.SessionClients) for the
session's controller (the client that last prompted it, or the first attached) and reads
what that client advertised; its requests go through it (an Editor: the protocol core's
connection is one, which this adapter never imports). The editor is asked
only about files inside the session's directories: it has no business with the rest of
the disk.
"""

import asyncio
import contextlib
import logging
import os
from abc import abstractmethod
from typing import Any, Protocol, TypeVar

from acp import schema as acp
from pydantic import BaseModel, ValidationError

from adapters.workspace.local import LocalWorkspace
from adapters.workspace.reading import excerpt_of_text
from application.ports.clients import Client, ClientFailed, ClientGone, SessionClients
from application.ports.workspace import (
    Chunk,
    CommandRun,
    Excerpt,
    PathKind,
    Show,
    Window,
    Workspace,
    WorkspaceError,
    Workspaces,
)
from domain.sandbox import SandboxPolicy
from domain.text import clip
from domain.tool_call import TerminalOutput

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
SHELL = "bash"  # the editor runs `bash -c <command>`, as our own bash tool does
CLEANUP_BOUND = 10.0  # a kill or release the editor never answers does not hold the turn


class Editor(Client, Protocol):
    """A client as this adapter asks it: what it advertised in `initialize`, and requests
    in ACP's terms (failing with the client port's errors)."""

    client_capabilities: Any

    @abstractmethod
    async def call(self, method: str, params: dict[str, Any]) -> Any: ...


def client_capabilities(peer: Editor) -> acp.ClientCapabilities:
    """What the client advertised in `initialize`; nothing when absent or unreadable."""
    try:
        return acp.ClientCapabilities.model_validate(peer.client_capabilities or {})
    except ValidationError:
        return acp.ClientCapabilities()


def _fs(capabilities: acp.ClientCapabilities) -> acp.FileSystemCapabilities:
    # The SDK replaces a malformed field with its defaults as a plain dict: read that too.
    fs = capabilities.fs
    if isinstance(fs, acp.FileSystemCapabilities):
        return fs
    try:
        return acp.FileSystemCapabilities.model_validate(fs or {})
    except ValidationError:
        return acp.FileSystemCapabilities()


def _inside(path: str, directories: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    for directory in directories:
        root = os.path.realpath(directory)
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


class AcpWorkspaces(Workspaces):
    def __init__(self, clients: SessionClients[Editor], local: LocalWorkspace) -> None:
        self._clients = clients
        self._local = local

    def for_session(
        self, session_id: str, directories: tuple[str, ...], sandbox: SandboxPolicy
    ) -> Workspace:
        local = self._local.under(sandbox, directories)
        return ClientWorkspace(session_id, directories, self._clients, local)


class ClientWorkspace(Workspace):
    def __init__(
        self,
        session_id: str,
        directories: tuple[str, ...],
        clients: SessionClients[Editor],
        local: Workspace,
    ) -> None:
        self._session_id = session_id
        self._directories = directories
        self._clients = clients
        self._local = local

    # -- which side serves a call

    def _client(self) -> tuple[Editor, acp.ClientCapabilities] | None:
        peer = self._clients.controller_of(self._session_id)
        return None if peer is None else (peer, client_capabilities(peer))

    def _reader(self, path: str) -> Editor | None:
        found = self._client()
        if found is None or not _inside(path, self._directories):
            return None
        peer, caps = found
        return peer if _fs(caps).read_text_file is True else None

    def _writer(self, path: str) -> Editor | None:
        found = self._client()
        if found is None or not _inside(path, self._directories):
            return None
        peer, caps = found
        return peer if _fs(caps).write_text_file is True else None

    def _terminal(self) -> Editor | None:
        found = self._client()
        return found[0] if found is not None and found[1].terminal is True else None

    # -- files

    async def kind(self, path: str) -> PathKind:
        return await self._local.kind(path)  # ACP has no stat

    async def list_dir(self, path: str) -> tuple[str, ...]:
        return await self._local.list_dir(path)  # ACP has no listing

    async def read_lines(self, path: str, start: int, end: int | None, window: Window) -> Excerpt:
        peer = self._reader(path)
        if peer is None:
            return await self._local.read_lines(path, start, end, window)
        # One line more than the window shows whether the file goes on past it.
        asked = window.lines + 1 if end is None else min(end - start + 1, window.lines + 1)
        request = acp.ReadTextFileRequest(
            session_id=self._session_id, path=path, line=start, limit=asked
        )
        answer = await _call(peer, "fs/read_text_file", request, acp.ReadTextFileResponse)
        text = answer.content
        count = len(text.split("\n")) - (1 if text.endswith("\n") or not text else 0)
        return excerpt_of_text(text, start, end, window, whole=count < asked)

    async def read_text(self, path: str) -> str | None:
        peer = self._reader(path)
        if peer is None:
            return await self._local.read_text(path)
        request = acp.ReadTextFileRequest(session_id=self._session_id, path=path)
        try:
            answer = await _call(peer, "fs/read_text_file", request, acp.ReadTextFileResponse)
        except WorkspaceError:
            # No buffer and no file: a new file. An error about an existing file stands.
            if await self._local.kind(path) is PathKind.MISSING:
                return None
            raise
        return str(answer.content)

    async def write_text(self, path: str, text: str) -> None:
        peer = self._writer(path)
        if peer is None:
            return await self._local.write_text(path, text)
        request = acp.WriteTextFileRequest(session_id=self._session_id, path=path, content=text)
        await _call(peer, "fs/write_text_file", request, None)

    # -- commands

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
        peer = self._terminal()
        if peer is None:
            return await self._local.run(
                command, cwd=cwd, seconds=seconds, output_limit=output_limit, chunk=chunk, show=show
            )
        request = acp.CreateTerminalRequest(
            session_id=self._session_id,
            command=SHELL,
            args=["-c", command],
            cwd=cwd,
            env=[],  # the editor's own environment; none of the server's (its secrets)
            output_byte_limit=output_limit,
        )
        # A cancel during the creation must still stop and release the terminal it made.
        creating = asyncio.ensure_future(
            _call(peer, "terminal/create", request, acp.CreateTerminalResponse)
        )
        try:
            terminal_id = (await asyncio.shield(creating)).terminal_id
        except asyncio.CancelledError:
            await asyncio.shield(self._abandon(peer, creating))
            raise
        try:
            await show(TerminalOutput(terminal_id=terminal_id))
            return await self._follow(peer, terminal_id, seconds, output_limit)
        except asyncio.CancelledError:
            await asyncio.shield(self._quietly(peer, "terminal/kill", terminal_id))
            raise
        finally:
            await asyncio.shield(self._quietly(peer, "terminal/release", terminal_id))

    async def _follow(
        self, peer: Editor, terminal_id: str, seconds: float, output_limit: int
    ) -> CommandRun:
        ids: dict[str, Any] = {"session_id": self._session_id, "terminal_id": terminal_id}
        timed_out = False
        waiting = _call(
            peer,
            "terminal/wait_for_exit",
            acp.WaitForTerminalExitRequest(**ids),
            acp.WaitForTerminalExitResponse,
        )
        try:
            await asyncio.wait_for(waiting, seconds)
        except TimeoutError:
            timed_out = True
            await _call(peer, "terminal/kill", acp.KillTerminalRequest(**ids), None)
        output = await _call(
            peer, "terminal/output", acp.TerminalOutputRequest(**ids), acp.TerminalOutputResponse
        )
        status = output.exit_status or acp.TerminalExitStatus()
        text = output.output
        if output.truncated:
            text = f"[... earlier output truncated by the editor ...]\n{text}"
        return CommandRun(
            output=clip(text, output_limit),
            exit_code=status.exit_code,
            signal=status.signal,
            timed_out=timed_out,
            truncated=output.truncated or len(text) > output_limit,
        )

    async def _abandon(
        self, peer: Editor, creating: "asyncio.Future[acp.CreateTerminalResponse]"
    ) -> None:
        try:
            terminal_id = (await creating).terminal_id
        except Exception:  # not created: nothing to stop
            return
        await self._quietly(peer, "terminal/kill", terminal_id)
        await self._quietly(peer, "terminal/release", terminal_id)

    async def _quietly(self, peer: Editor, method: str, terminal_id: str) -> None:
        """Kill or release, as cleanup: a client that cannot any more is left alone."""
        model = acp.KillTerminalRequest if method == "terminal/kill" else acp.ReleaseTerminalRequest
        request = model(session_id=self._session_id, terminal_id=terminal_id)
        with contextlib.suppress(WorkspaceError, TimeoutError):
            await asyncio.wait_for(_call(peer, method, request, None), CLEANUP_BOUND)


async def _call(peer: Editor, method: str, request: acp.BaseModel, answer: type[M] | None) -> Any:
    """One call to the client; its failures become WorkspaceError, with a clear message."""
    params = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        result = await peer.call(method, params)
    except ClientGone as exc:
        raise WorkspaceError(f"The editor disconnected before answering {method}.") from exc
    except ClientFailed as exc:
        log.info("the client answered %s with error %s: %s", method, exc.code, exc.message)
        raise WorkspaceError(f"The editor could not serve {method}: {exc.message}") from exc
    if answer is None:
        return result
    try:
        return answer.model_validate(result or {})
    except ValidationError as exc:
        raise WorkspaceError(f"The editor's answer to {method} was not understood.") from exc
