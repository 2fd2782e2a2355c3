"""bash: a command in its own process group, output streamed, stopped for good on cancel,
at its end, and when the server stops or dies (see adapters.tools.processes)."""

import asyncio
import codecs
import contextlib
import os
import signal
from collections.abc import Mapping

from adapters.secrets import is_secret
from adapters.tools.base import Limits, Tool, ToolInputError, schema, text_arg, workspace_of
from adapters.tools.processes import (
    group_alive,
    launch_arguments,
    register,
    release,
    signal_group,
    watch_pipe,
)
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from application.ports.workspace import Chunk, CommandRun
from domain.tool_call import TerminalOutput, TextOutput, ToolOutput

KILL_GRACE = 2.0
GONE_BOUND = 30.0  # a killed process dies at once; only a stuck kernel would take this long


def _child_environment() -> dict[str, str]:
    # The server sheds its credentials at start (bootstrap.environment); this holds when
    # it could not, or when someone set one later.
    return {k: v for k, v in os.environ.items() if not is_secret(k)}


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
    """Until the shell itself exits. Process.wait() would also wait for its pipes, which a
    background child can hold open for as long as it lives."""
    while process.returncode is None:  # noqa: ASYNC110 - no event fires on exit alone
        await asyncio.sleep(0.02)


async def _group_gone(group: int) -> None:
    while group_alive(group):  # noqa: ASYNC110 - the kernel reports no event for it
        await asyncio.sleep(0.02)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a short grace, and wait
    until every process of it is really gone (a killed process takes a moment to die)."""
    signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_exited(process), KILL_GRACE)
    signal_group(process.pid, signal.SIGKILL)  # also stops children that outlived the shell
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_exited(process), KILL_GRACE)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_group_gone(process.pid), GONE_BOUND)


async def _abandon(starting: "asyncio.Future[asyncio.subprocess.Process]") -> None:
    try:
        process = await starting
    except Exception:  # it did not start: nothing to stop
        return
    try:
        await _stop(process)
    finally:
        release(process.pid)


async def run_process(
    command: str, *, cwd: str, seconds: float, output_limit: int, chunk: Chunk
) -> CommandRun:
    """Run `command` here, in its own process group, streaming its output to `chunk`."""
    # The command may already run before its start returns here: a cancel that came
    # meanwhile must still stop all of it, so the start is not cancelled half-way.
    starting = asyncio.ensure_future(_start(command, cwd))
    try:
        process = await asyncio.shield(starting)
    except asyncio.CancelledError:
        await asyncio.shield(_abandon(starting))
        raise
    try:
        return await _supervise(process, chunk, seconds=seconds, limit=output_limit)
    finally:
        release(process.pid)


async def _start(command: str, cwd: str) -> asyncio.subprocess.Process:
    # Forked from the event loop's thread, like every asyncio subprocess.
    reader, writer = watch_pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *launch_arguments(command),
            cwd=cwd,
            env=_child_environment(),
            stdin=reader,  # the watchman's end of the pipe; the command gets /dev/null
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group: we can stop all of it
        )
    except BaseException:
        os.close(writer)
        raise
    finally:
        os.close(reader)
    register(process.pid, writer)
    return process


async def _supervise(
    process: asyncio.subprocess.Process, chunk: Chunk, *, seconds: float, limit: int
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
        await asyncio.shield(_stop(process))
        raise
    # The shell is done (or out of time): stop whatever it left running in its group,
    # which also closes the pipe a background child may still hold open.
    await _stop(process)
    # A child that left the group (setsid) may hold the pipe open: do not wait for it.
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


class Bash(Tool):
    definition = ToolDefinition(
        name="bash",
        description="Run a shell command (bash -c) in the working directory. Output "
        "(stdout and stderr together) streams to the user. timeout is in "
        "seconds. Processes it starts in the background are stopped when the command ends, "
        "so a server needed by a later command must be started in that same command.",
        input_schema=schema(
            {"command": {"type": "string"}, "timeout": {"type": "number", "exclusiveMinimum": 0}},
            ["command"],
        ),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    def _timeout(self, arguments: Mapping[str, object]) -> float:
        value = arguments.get("timeout", self._limits.bash_timeout)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ToolInputError("timeout must be a positive number of seconds.")
        return min(float(value), self._limits.bash_max_timeout)

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        text_arg(arguments, "command")
        self._timeout(arguments)
        return ToolPlan(locations=(context.cwd,))

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        command = text_arg(arguments, "command") or ""
        timeout = self._timeout(arguments)
        terminals: list[TerminalOutput] = []

        async def show(output: ToolOutput) -> None:
            if isinstance(output, TerminalOutput):
                terminals.append(output)
            await progress(output)

        ran = await workspace_of(context).run(
            command,
            cwd=context.cwd,
            seconds=timeout,
            output_limit=self._limits.output_chars,
            chunk=progress,
            show=show,
        )
        return self._result(ran, timeout, tuple(terminals))

    @staticmethod
    def _result(
        ran: CommandRun, timeout: float, terminals: tuple[TerminalOutput, ...]
    ) -> ToolResult:
        body = ran.output or "(no output)"
        if ran.timed_out:
            status = f"Timed out after {timeout:g} s; the command was stopped."
        elif ran.exit_code is None and ran.signal:
            status = f"Killed by signal {ran.signal}."
        else:
            status = f"Exit code {ran.exit_code}."
        full = f"{body}\n\n{status}"
        raw: dict[str, object] = {"exitCode": ran.exit_code, "timedOut": ran.timed_out}
        if ran.signal:
            raw["signal"] = ran.signal
        # A terminal the editor showed stays shown; its text is kept for a later replay.
        shown: tuple[ToolOutput, ...] = tuple(
            TerminalOutput(terminal_id=t.terminal_id, text=full) for t in terminals
        ) or (TextOutput(text=full),)
        return ToolResult(
            text=full,
            is_error=ran.timed_out or ran.exit_code != 0,
            output=shown,
            raw_output=raw,
        )
