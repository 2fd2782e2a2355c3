"""glob and grep, in plain Python: no external binaries to depend on."""

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from adapters.tools.base import (
    Limits,
    Tool,
    ToolInputError,
    clip,
    int_arg,
    is_binary,
    locate,
    schema,
    text_arg,
)
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from domain.tool_call import TextOutput

SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}
MAX_FILE_BYTES = 5 * 2**20
DIR = {"type": "string", "description": "Where to search (default: the working directory)."}


def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            yield Path(folder, name)


def _walk(root: Path, boundary: Path) -> Iterator[Path]:
    """Regular files under root whose real location stays inside `boundary`: a symlink
    in the tree must not lead the search out of what was allowed, and a FIFO or device
    could block the search for ever."""
    for path in _files(root):
        real = Path(os.path.realpath(path))
        try:
            regular = stat.S_ISREG(real.stat().st_mode)
        except OSError:
            continue
        if regular and real.is_relative_to(boundary):
            yield path


def _boundary(base: Path, cwd: str) -> Path:
    """The session's cwd, or the searched directory itself when the user allowed a search
    outside it."""
    root = Path(os.path.realpath(cwd))
    real = Path(os.path.realpath(base))
    return root if real.is_relative_to(root) else real


def _base(arguments: Mapping[str, object], cwd: str) -> tuple[Path, bool]:
    located = locate(cwd, text_arg(arguments, "path", required=False) or ".")
    return located.path, located.outside


class Glob(Tool):
    definition = ToolDefinition(
        name="glob",
        description="Find files by glob pattern, e.g. '**/*.py' or 'src/*.ts'.",
        input_schema=schema({"pattern": {"type": "string"}, "path": DIR}, ["pattern"]),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        pattern = text_arg(arguments, "pattern") or ""
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ToolInputError("pattern must be relative to path; put the directory in path.")
        if any("**" in part and part != "**" for part in Path(pattern).parts):
            raise ToolInputError("'**' must be a whole path part, as in 'src/**/*.py'.")
        base, outside = _base(arguments, cwd)
        return ToolPlan(locations=(str(base),), outside_cwd=outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        base, _ = _base(arguments, context.cwd)
        pattern = text_arg(arguments, "pattern") or ""
        matches = await asyncio.to_thread(self._find, base, pattern)
        shown = matches[: self._limits.search_results]
        body = "\n".join(shown) or f"No files match {pattern} in {base}."
        if len(matches) > len(shown):
            body += f"\n[... {len(matches) - len(shown)} more matches not shown]"
        return ToolResult(
            text=body, output=(TextOutput(text=body),), raw_output={"matches": len(matches)}
        )

    @staticmethod
    def _find(base: Path, pattern: str) -> list[str]:
        found = []
        for path in base.glob(pattern):
            parts = path.relative_to(base).parts
            if not SKIPPED_DIRS.intersection(parts):
                found.append(str(path.relative_to(base)) + ("/" if path.is_dir() else ""))
        return sorted(found)


class Grep(Tool):
    definition = ToolDefinition(
        name="grep",
        description="Search file contents with a regular expression (Python syntax). "
        "output_mode: 'content' (matching lines, default), "
        "'files_with_matches' or 'count'.",
        input_schema=schema(
            {
                "pattern": {"type": "string"},
                "path": DIR,
                "glob": {"type": "string", "description": "Only files matching this glob."},
                "case_insensitive": {"type": "boolean"},
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                },
                "max_results": {"type": "integer", "minimum": 1},
            },
            ["pattern"],
        ),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        self._regex(arguments)
        mode = arguments.get("output_mode", "content")
        if mode not in ("content", "files_with_matches", "count"):
            raise ToolInputError("output_mode must be content, files_with_matches or count.")
        base, outside = _base(arguments, cwd)
        return ToolPlan(locations=(str(base),), outside_cwd=outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        base, _ = _base(arguments, context.cwd)
        limit = min(
            int_arg(arguments, "max_results") or self._limits.search_results,
            self._limits.search_results * 10,
        )
        rows, total = await asyncio.to_thread(
            self._search,
            base,
            _boundary(base, context.cwd),
            self._regex(arguments),
            text_arg(arguments, "glob", required=False),
            str(arguments.get("output_mode", "content")),
            limit,
        )
        body = "\n".join(rows) or "No matches."
        if total > len(rows):
            body += f"\n[... {total - len(rows)} more results not shown]"
        body = clip(body, self._limits.output_chars)
        return ToolResult(text=body, output=(TextOutput(text=body),), raw_output={"results": total})

    @staticmethod
    def _regex(arguments: Mapping[str, object]) -> re.Pattern[str]:
        pattern = text_arg(arguments, "pattern") or ""
        flags = re.IGNORECASE if arguments.get("case_insensitive") is True else 0
        try:
            return re.compile(pattern, flags)
        except re.error as exc:
            raise ToolInputError(f"Invalid regular expression: {exc}.") from None

    @staticmethod
    def _search(
        base: Path,
        boundary: Path,
        regex: re.Pattern[str],
        glob: str | None,
        mode: str,
        limit: int,
    ) -> tuple[list[str], int]:
        rows: list[str] = []
        total = 0
        for path in _walk(base, boundary):
            shown = str(path.relative_to(base)) if base.is_dir() else str(path)
            if glob and not (fnmatch.fnmatch(shown, glob) or fnmatch.fnmatch(path.name, glob)):
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if is_binary(data[:8192]):
                continue
            hits = [
                (n, line)
                for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1)
                if regex.search(line)
            ]
            if not hits:
                continue
            if mode == "content":
                for n, line in hits:
                    total += 1
                    if len(rows) < limit:
                        rows.append(f"{shown}:{n}:{line[:500]}")
            else:
                total += 1
                if len(rows) < limit:
                    rows.append(shown if mode == "files_with_matches" else f"{shown}:{len(hits)}")
        return rows, total
