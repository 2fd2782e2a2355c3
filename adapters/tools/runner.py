import logging
from collections.abc import Mapping

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

log = logging.getLogger(__name__)


class LocalToolRunner(ToolRunner):
    """The local tools. Bad input and OS errors become error results for the model."""

    def __init__(self, limits: Limits | None = None) -> None:
        limits = limits or Limits()
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

    async def plan(self, name: str, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        tool = self._tools.get(name)
        if tool is None:
            return ToolPlan(problem=f"There is no tool named {name!r}.")
        try:
            return await tool.plan(arguments, cwd)
        except ToolInputError as exc:
            return ToolPlan(problem=str(exc))
        except OSError as exc:
            return ToolPlan(problem=f"{type(exc).__name__}: {exc.strerror or exc}")
        except Exception as exc:  # a tool bug must fail the call, not the turn
            log.exception("planning %s failed", name)
            return ToolPlan(problem=f"The {name} tool failed: {type(exc).__name__}: {exc}")

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(text=f"There is no tool named {name!r}.", is_error=True)
        try:
            return await tool.run(arguments, context, progress)
        except ToolInputError as exc:
            return ToolResult(text=str(exc), is_error=True)
        except OSError as exc:
            return ToolResult(
                text=f"{type(exc).__name__}: {exc.strerror or exc} ({exc.filename or name})",
                is_error=True,
            )
        except Exception as exc:  # a tool bug must fail the call, not the turn
            log.exception("running %s failed", name)
            return ToolResult(
                text=f"The {name} tool failed: {type(exc).__name__}: {exc}", is_error=True
            )
