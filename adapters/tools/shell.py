"""bash: a command run in the session's workspace (this machine's, under its own launcher:
adapters.workspace.commands; or the editor's terminal), its output streamed."""

from collections.abc import Mapping

from adapters.tools.base import Limits, Tool, ToolInputError, schema, text_arg, workspace_of
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from application.ports.workspace import CommandRun
from domain.tool_call import TerminalOutput, TextOutput, ToolOutput


class Bash(Tool):
    definition = ToolDefinition(
        name="bash",
        description="Run a shell command (bash -c) in the working directory. Output "
        "(stdout and stderr together) streams to the user. timeout is in "
        "seconds. Processes it starts in the background are stopped when the command ends, "
        "so a server needed by a later command must be started in that same command. "
        "For a command that should keep running while you go on (a dev server, a watcher, a "
        "long build or test suite), set run_in_background: true: you get a task id at once "
        "(no timeout applies), read its output with task_output and stop it with task_kill.",
        input_schema=schema(
            {
                "command": {"type": "string"},
                "timeout": {"type": "number", "exclusiveMinimum": 0},
                "run_in_background": {"type": "boolean"},
            },
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
        if not isinstance(arguments.get("run_in_background", False), bool):
            raise ToolInputError("run_in_background must be true or false.")
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
        if ran.note:
            full = f"{full}\n{ran.note}"
        raw: dict[str, object] = {"exitCode": ran.exit_code, "timedOut": ran.timed_out}
        if ran.signal:
            raw["signal"] = ran.signal
        if ran.note:
            raw["sandbox"] = ran.note
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
