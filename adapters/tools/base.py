import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from application.ports.workspace import Workspace


class ToolInputError(ValueError):
    """The model sent input the tool cannot use; shown to it as an error result."""


@dataclass(frozen=True, slots=True)
class Limits:
    output_chars: int = 30_000  # what one tool result may hand the model
    read_lines: int = 2_000
    list_entries: int = 1_000
    search_results: int = 200
    bash_timeout: float = 120.0
    bash_max_timeout: float = 600.0
    fetch_chars: int = 50_000
    fetch_bytes: int = 2 * 2**20
    fetch_timeout: float = 20.0


def text_arg(
    arguments: Mapping[str, object], name: str, *, required: bool = True, allow_empty: bool = False
) -> str | None:
    value = arguments.get(name)
    if value is None:
        if required:
            raise ToolInputError(f"`{name}` is required.")
        return None
    if not isinstance(value, str) or (not allow_empty and not value):
        raise ToolInputError(f"`{name}` must be a non-empty string.")
    return value


def int_arg(arguments: Mapping[str, object], name: str) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolInputError(f"`{name}` must be an integer.")
    return int(value)


@dataclass(frozen=True, slots=True)
class Located:
    path: Path  # absolute, normalised (symlinks not resolved: what the user recognises)
    outside: bool  # resolves (through .. or symlinks) outside the working directory


def locate(cwd: str, raw: str, roots: tuple[str, ...] = ()) -> Located:
    """`raw` relative to cwd; inside when it resolves into cwd or one of `roots` (the
    session's extra directories)."""
    path = Path(os.path.normpath(Path(cwd, os.path.expanduser(raw))))
    real = Path(os.path.realpath(path))
    inside = any(
        real == root or real.is_relative_to(root)
        for root in (Path(os.path.realpath(r)) for r in (cwd, *roots))
    )
    return Located(path=path, outside=not inside)


def target(
    arguments: Mapping[str, object], context: ToolContext, *, default: str | None = None
) -> Located:
    """Where a call's `path` argument points: read and resolved the same way when the call
    is planned (inside or outside, with the session's extra directories) and when it runs."""
    raw = text_arg(arguments, "path", required=default is None) or default or ""
    return locate(context.cwd, raw, context.roots)


def workspace_of(context: ToolContext) -> Workspace:
    """The session's workspace (the runner gives every call one)."""
    if context.workspace is None:
        raise RuntimeError("the tool context has no workspace")
    return context.workspace


class Tool(ABC):
    definition: ToolDefinition

    @abstractmethod
    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan: ...

    @abstractmethod
    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult: ...


def schema(properties: dict[str, dict[str, object]], required: list[str]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
