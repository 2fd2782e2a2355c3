"""The three ways to reach a server, as SDK transports that also say when the server is gone.

stdio is ours rather than the SDK's `stdio_client`: that one kills the server's process group
only when the server outlives the grace period, so a server that exits on EOF leaves the
children it spawned running. Ours always ends the whole group, and knows the pid and exit
status to say what happened.
"""

import logging
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import Any

import anyio
import httpx2
import mcp_types
from anyio.abc import Process
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from domain.mcp import McpServerSpec, McpTransport

logger = logging.getLogger(__name__)

GRACE = 2.0  # for a server to exit on EOF, then again after SIGTERM
_POLL = 0.01
_READ_TIMEOUT = 300.0  # a server may keep a response stream open that long between events
# Besides the SDK's few (PATH, HOME, USER, ...): what programs need to read and write text.
_ALSO_INHERITED = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")

Lost = Callable[[str], None]  # told why, once, when the server goes away by itself


class Clues:
    """What tells why a server failed: the last lines a stdio server wrote on stderr, the
    last HTTP error status (the SDK turns most of them into a bare "error response")."""

    LINES = 5
    CHARACTERS = 400

    def __init__(self) -> None:
        self._lines: deque[str] = deque(maxlen=self.LINES)
        self._partial = b""
        self.http_status: int | None = None

    async def response(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.http_status = response.status_code

    def feed(self, chunk: bytes) -> None:
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        self._partial = self._partial[-4096:]  # a line without end cannot grow without bound
        for line in lines:
            if text := line.decode(errors="replace").strip():
                self._lines.append(text[-self.CHARACTERS :])

    def text(self) -> str:
        last = self._partial.decode(errors="replace").strip()
        return " / ".join([*self._lines, *([last] if last else [])])[-self.CHARACTERS :]


def transport(
    spec: McpServerSpec, *, cwd: str, timeout: float, clues: Clues, on_lost: Lost
) -> AbstractAsyncContextManager[TransportStreams]:
    if spec.transport is McpTransport.STDIO:
        return stdio_transport(spec, cwd=cwd, clues=clues, on_lost=on_lost)
    return _watched(_http_transport(spec, connect_timeout=timeout, clues=clues), on_lost)


def server_environment(spec: McpServerSpec) -> dict[str, str]:
    """A minimal safe environment with the server's own variables over it: never ours."""
    base = get_default_environment()
    base |= {name: os.environ[name] for name in _ALSO_INHERITED if name in os.environ}
    return base | dict(spec.env)


@asynccontextmanager
async def stdio_transport(
    spec: McpServerSpec, *, cwd: str, clues: Clues, on_lost: Lost
) -> AsyncIterator[TransportStreams]:
    process = await anyio.open_process(
        [spec.command, *spec.args],
        env=server_environment(spec),
        cwd=cwd,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so it is stopped with its children
    )
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    stopping = False

    async def read() -> None:
        assert process.stdout is not None
        buffer = b""
        try:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in process.stdout:
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for line in lines:
                        if line.strip():
                            await to_session.send(_parse(line))
            if not stopping:  # said before the session learns of it, so failures say why
                on_lost(await _exit_reason(process))
        finally:
            await to_session.aclose()

    async def write() -> None:
        assert process.stdin is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")

    async def collect_stderr() -> None:
        assert process.stderr is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                clues.feed(chunk)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        tasks.start_soon(collect_stderr)
        try:
            yield read_stream, write_stream
        finally:
            stopping = True
            with anyio.CancelScope(shield=True):  # a cancelled owner must not leak the server
                await stop_process(process)
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def stop_process(process: Process) -> None:
    """EOF on stdin, then SIGTERM, then SIGKILL; and always the whole group at the end."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if not await _exited(process, GRACE):
        _signal_group(process.pid, signal.SIGTERM)
        if not await _exited(process, GRACE):
            _signal_group(process.pid, signal.SIGKILL)
            await _exited(process, GRACE)
    # The server is gone; whatever it started in its group goes with it.
    _signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(GRACE):  # a daemon that left the group may hold the pipes
        await process.aclose()


def _signal_group(pgid: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def _exited(process: Process, within: float) -> bool:
    # Not process.wait(): it also waits for the pipes, which a child may still hold.
    with anyio.move_on_after(within):
        while process.returncode is None:  # noqa: ASYNC110 - a process exit has no event
            await anyio.sleep(_POLL)
    return process.returncode is not None


async def _exit_reason(process: Process) -> str:
    if await _exited(process, GRACE):
        code = process.returncode
        assert code is not None
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        return f"the server {how}"
    return "the server closed its output"


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:  # handed to the session, which logs it and carries on
        return error


@asynccontextmanager
async def _http_transport(
    spec: McpServerSpec, *, connect_timeout: float, clues: Clues
) -> AsyncIterator[TransportStreams]:
    def http_client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(connect_timeout, read=_READ_TIMEOUT),
            auth=auth,
            event_hooks={"response": [clues.response]},
        )

    headers = dict(spec.headers)
    if spec.transport is McpTransport.SSE:
        async with sse_client(
            spec.url, headers=headers, timeout=connect_timeout, httpx_client_factory=http_client
        ) as streams:
            yield streams
        return
    async with (
        http_client(headers=headers) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams


@asynccontextmanager
async def _watched(
    inner: AbstractAsyncContextManager[TransportStreams], on_lost: Lost
) -> AsyncIterator[TransportStreams]:
    """Reports the end of the server's messages, unless it is we who closed the connection."""
    state = {"closing": False}

    def ended() -> None:
        if not state["closing"]:
            on_lost("the server closed the connection")

    async with inner as (read_stream, write_stream):
        try:
            yield _WatchedStream(read_stream, ended), write_stream
        finally:
            state["closing"] = True


class _WatchedStream:
    """A read stream that calls `ended` when it runs out."""

    def __init__(self, inner: Any, ended: Callable[[], None]) -> None:
        self._inner = inner
        self._ended = ended

    @property
    def last_context(self) -> Any:  # the SDK reads the sender's context off the stream
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended()
            raise

    def __aiter__(self) -> "_WatchedStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_WatchedStream":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
