import logging
import os
from collections.abc import Mapping
from dataclasses import replace

from adapters.tools.base import Limits, Tool, ToolInputError
from adapters.tools.files import EditFile, ListFiles, ReadFile, WriteFile
from adapters.tools.search import Glob, Grep
from adapters.tools.shell import Bash
from adapters.tools.web import WebFetch
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.ports.workspace import Workspace, WorkspaceError
from domain.text import shown, valid_data, valid_text
from domain.tool_call import DiffOutput, TerminalOutput, TextOutput, ToolOutput

log = logging.getLogger(__name__)


class LocalToolRunner(ToolRunner):
    """The local tools. Bad input and OS errors become error results for the model."""

    def __init__(self, limits: Limits | None = None, local: Workspace | None = None) -> None:
        limits = limits or Limits()
        # For a context that brings no workspace (the catalogue always gives one; the
        # composition root lends this machine's for the rest).
        self._local = local
        tools: list[Tool] = [
            ReadFile(limits),
            ListFiles(limits),
            Glob(limits),
            Grep(limits),
            WebFetch(limits),
            WriteFile(),
            EditFile(),
            Bash(limits),
        ]
        self._tools = {t.definition.name: t for t in tools}

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        return tuple(
            t.definition for name, t in self._tools.items() if names is None or name in names
        )

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        return valid_plan(await self._plan(name, arguments, self._with_workspace(context)))

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        async def valid_progress(chunk: str | ToolOutput) -> None:
            await progress(valid_text(chunk) if isinstance(chunk, str) else valid_output(chunk))

        context = self._with_workspace(context)
        return valid_result(await self._run(name, arguments, context, valid_progress))

    def _with_workspace(self, context: ToolContext) -> ToolContext:
        if context.workspace or self._local is None:
            return context
        return replace(context, workspace=self._local)

    async def _plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        tool = self._tools.get(name)
        if tool is None:
            return ToolPlan(problem=f"There is no tool named {name!r}.")
        try:
            return await tool.plan(arguments, context)
        except (ToolInputError, WorkspaceError) as exc:
            return ToolPlan(problem=str(exc))
        except OSError as exc:
            return ToolPlan(problem=f"{type(exc).__name__}: {exc.strerror or exc}")
        except Exception as exc:  # a tool bug must fail the call, not the turn
            log.exception("planning %s failed", name)
            return ToolPlan(problem=f"The {name} tool failed: {type(exc).__name__}: {exc}")

    async def _run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(text=f"There is no tool named {name!r}.", is_error=True)
        try:
            return await tool.run(arguments, context, progress)
        except (ToolInputError, WorkspaceError) as exc:
            return ToolResult(text=str(exc), is_error=True)
        except OSError as exc:
            return ToolResult(
                text=f"{type(exc).__name__}: {exc.strerror or exc} ({_filename(exc) or name})",
                is_error=True,
            )
        except Exception as exc:  # a tool bug must fail the call, not the turn
            log.exception("running %s failed", name)
            return ToolResult(
                text=f"The {name} tool failed: {type(exc).__name__}: {exc}", is_error=True
            )


def _filename(exc: OSError) -> str | None:
    name = exc.filename
    return shown(name) if isinstance(name, str | bytes | os.PathLike) else None


# Every text a tool hands back must be valid Unicode: a lone surrogate (from an undecodable
# file name, say) would make every later store, send and model request of the session fail.


def valid_output(output: ToolOutput) -> ToolOutput:
    if isinstance(output, TextOutput):
        return TextOutput(text=valid_text(output.text))
    if isinstance(output, TerminalOutput):
        return TerminalOutput(
            terminal_id=valid_text(output.terminal_id), text=valid_text(output.text)
        )
    return DiffOutput(
        path=valid_text(output.path),
        old_text=None if output.old_text is None else valid_text(output.old_text),
        new_text=valid_text(output.new_text),
    )


def valid_plan(plan: ToolPlan) -> ToolPlan:
    return replace(
        plan,
        locations=tuple(valid_text(p) for p in plan.locations),
        preview=tuple(valid_output(o) for o in plan.preview),
        problem=None if plan.problem is None else valid_text(plan.problem),
        ask_reason=None if plan.ask_reason is None else valid_text(plan.ask_reason),
    )


def valid_result(result: ToolResult) -> ToolResult:
    return replace(
        result,
        text=valid_text(result.text),
        output=tuple(valid_output(o) for o in result.output),
        raw_output=valid_data(dict(result.raw_output)),
    )
