"""bash: a command in its own process group, output streamed, stopped for good on cancel."""

import asyncio
import codecs
import contextlib
import os
import signal
from collections.abc import Mapping

from adapters.tools.base import Limits, Tool, ToolInputError, clip, schema, text_arg
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from domain.tool_call import TextOutput

KILL_GRACE = 2.0


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a short grace."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE)
    _signal_group(process.pid, signal.SIGKILL)  # also reaps children that outlived the shell
    await process.wait()


class Bash(Tool):
    definition = ToolDefinition(
        name="bash",
        description="Run a shell command (bash -c) in the working directory. Output "
        "(stdout and stderr together) streams to the user. timeout is in "
        "seconds.",
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

    async def plan(self, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        text_arg(arguments, "command")
        self._timeout(arguments)
        return ToolPlan(locations=(cwd,))

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        command = text_arg(arguments, "command") or ""
        timeout = self._timeout(arguments)
        process = await asyncio.create_subprocess_exec(
            "/bin/bash",
            "-c",
            command,
            cwd=context.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )  # its own process group: we can stop all of it
        output: list[str] = []
        timed_out = False
        try:
            await asyncio.wait_for(self._pump(process, output, progress), timeout)
            await process.wait()
        except TimeoutError:
            timed_out = True
            await _stop(process)
        except BaseException:
            await asyncio.shield(_stop(process))
            raise
        return self._result(process.returncode, "".join(output), timed_out, timeout)

    @staticmethod
    async def _pump(
        process: asyncio.subprocess.Process, output: list[str], progress: Progress
    ) -> None:
        assert process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await process.stdout.read(4096):
            text = decoder.decode(chunk)
            if text:
                output.append(text)
                await progress(text)

    def _result(self, code: int | None, text: str, timed_out: bool, timeout: float) -> ToolResult:
        body = clip(text, self._limits.output_chars) or "(no output)"
        if timed_out:
            status = f"Timed out after {timeout:g} s; the command was stopped."
        else:
            status = f"Exit code {code}."
        full = f"{body}\n\n{status}"
        return ToolResult(
            text=full,
            is_error=timed_out or code != 0,
            output=(TextOutput(text=full),),
            raw_output={"exitCode": code, "timedOut": timed_out},
        )
