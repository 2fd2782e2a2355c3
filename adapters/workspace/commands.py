"""Commands run on this machine: each under its own launcher, output streamed, its whole
process tree stopped for good on cancel, at its end, and when the server stops or dies
(adapters.workspace.processes)."""

import asyncio
import codecs
import contextlib
import os
import signal

from adapters.secrets import is_secret
from adapters.workspace.processes import (
    RUN_VARIABLE,
    end_marked,
    launch_arguments,
    new_run_id,
    register,
    release,
    watch_pipe,
)
from application.ports.workspace import Chunk, CommandRun

KILL_GRACE = 2.0  # the launcher gives the shell as long on SIGTERM (launcher.GRACE)
GONE_BOUND = 30.0  # a killed process dies at once; only a stuck kernel would take this long


def _child_environment(run_id: str) -> dict[str, str]:
    # The server sheds its credentials at start (bootstrap.environment); this holds when
    # it could not, or when someone set one later.
    environment = {k: v for k, v in os.environ.items() if not is_secret(k)}
    environment[RUN_VARIABLE] = run_id  # each process of the run inherits it
    return environment


class _Output:
    """A command's output within bounds: its head and its tail, however much it prints."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head = ""
        self._tail = ""
        self._total = 0

    def add(self, text: str) -> None:
        self._total += len(text)
        if len(self._head) < self._limit:
            self._head += text[: self._limit - len(self._head)]
        self._tail = (self._tail + text)[-self._limit :]

    @property
    def truncated(self) -> bool:
        return self._total > self._limit

    def render(self) -> str:
        if self._total <= self._limit:
            return self._head
        head, tail = self._head[: self._limit * 2 // 3], self._tail[-(self._limit // 3) :]
        cut = self._total - len(head) - len(tail)
        return f"{head}\n\n[... {cut} characters truncated ...]\n\n{tail}"


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Until the launcher itself exits. Process.wait() would also wait for its pipes, which
    a process that escaped it could hold open for as long as it lives."""
    while process.returncode is None:  # noqa: ASYNC110 - no event fires on exit alone
        await asyncio.sleep(0.02)


async def _stop(process: asyncio.subprocess.Process, run_id: str) -> None:
    """Ask the launcher to end the command's tree (SIGTERM: a grace, then SIGKILL) and wait
    until it has: it exits only once nothing of the tree is left. Then end whatever of the
    run outlived its launcher (a command that killed it)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_exited(process), KILL_GRACE + GONE_BOUND)
    if process.returncode is None:  # a stuck launcher: what it holds is found by its marker
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_exited(process), GONE_BOUND)
    await asyncio.to_thread(end_marked, run_id)


async def _abandon(starting: "asyncio.Future[asyncio.subprocess.Process]", run_id: str) -> None:
    try:
        process = await starting
    except Exception:  # it did not start: nothing to stop
        return
    try:
        await _stop(process, run_id)
    finally:
        release(process.pid)


async def run_process(
    command: str,
    *,
    cwd: str,
    seconds: float,
    output_limit: int,
    chunk: Chunk,
    sandbox: str | None = None,
) -> CommandRun:
    """Run `command` here, under its own launcher (confined as `sandbox` says, if given),
    streaming its output to `chunk`."""
    # The command may already run before its start returns here: a cancel that came
    # meanwhile must still stop all of it, so the start is not cancelled half-way.
    run_id = new_run_id()
    starting = asyncio.ensure_future(_start(command, cwd, run_id, sandbox))
    try:
        process = await asyncio.shield(starting)
    except asyncio.CancelledError:
        await asyncio.shield(_abandon(starting, run_id))
        raise
    try:
        return await _supervise(process, run_id, chunk, seconds=seconds, limit=output_limit)
    finally:
        release(process.pid)


async def _start(
    command: str, cwd: str, run_id: str, sandbox: str | None
) -> asyncio.subprocess.Process:
    # Forked from the event loop's thread, like every asyncio subprocess.
    reader, writer = watch_pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *launch_arguments(command, sandbox),
            cwd=cwd,
            env=_child_environment(run_id),
            stdin=reader,  # the launcher's watch pipe; the command gets /dev/null
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # out of the server's group: a ^C to it is for us
        )
    except BaseException:
        os.close(writer)
        raise
    finally:
        os.close(reader)
    register(process.pid, writer)
    return process


async def _supervise(
    process: asyncio.subprocess.Process, run_id: str, chunk: Chunk, *, seconds: float, limit: int
) -> CommandRun:
    output = _Output(limit)
    pump = asyncio.ensure_future(_pump(process, output, chunk))
    timed_out = False
    try:
        await asyncio.wait_for(_exited(process), seconds)
    except TimeoutError:
        timed_out = True
    except BaseException:
        pump.cancel()
        await asyncio.shield(_stop(process, run_id))
        raise
    # The launcher ended what the shell left running when it exited; out of time, it is
    # told to now. Either way that closes the pipe a background child held open.
    await _stop(process, run_id)
    # A child that escaped its launcher could still hold the pipe: do not wait for it.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(pump), KILL_GRACE)
    pump.cancel()
    await asyncio.gather(pump, return_exceptions=True)
    transport = getattr(process, "_transport", None)  # the pipe a setsid child still holds
    if transport is not None:
        transport.close()
    return CommandRun(
        output=output.render(),
        exit_code=process.returncode,
        timed_out=timed_out,
        truncated=output.truncated,
    )


async def _pump(process: asyncio.subprocess.Process, output: _Output, chunk: Chunk) -> None:
    assert process.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while data := await process.stdout.read(4096):
        text = decoder.decode(data)
        if text:
            output.add(text)
            await chunk(text)
