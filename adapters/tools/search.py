"""glob and grep, in plain Python: no external binaries to depend on."""

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from adapters.tools.base import (
    Limits,
    Tool,
    ToolInputError,
    int_arg,
    schema,
    target,
    text_arg,
)
from adapters.tools.tree import (
    boundary_for,
    glob_match,
    glob_may_match_below,
    regular_files,
    walk,
)
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from domain.text import clip, is_binary, shown
from domain.tool_call import TextOutput

# Files are streamed line by line, so their size costs time, not memory: a line is taken
# in pieces of at most PIECE_BYTES (a match across two pieces of one very long line is
# missed), and a file over MAX_FILE_BYTES is left out, by name, rather than read for minutes.
PIECE_BYTES = 2**20
MAX_FILE_BYTES = 2**30
SNIFF_BYTES = 8192
DIR: dict[str, object] = {
    "type": "string",
    "description": "Where to search (default: the working directory).",
}


class Glob(Tool):
    definition = ToolDefinition(
        name="glob",
        description="Find files by glob pattern, e.g. '**/*.py' or 'src/*.ts'.",
        input_schema=schema({"pattern": {"type": "string"}, "path": DIR}, ["pattern"]),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        self._pattern(arguments)
        located = target(arguments, context, default=".")
        return ToolPlan(locations=(str(located.path),), outside_cwd=located.outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        base = target(arguments, context, default=".").path
        pattern = text_arg(arguments, "pattern") or ""
        matches = await asyncio.to_thread(
            self._find, base, boundary_for(base, context.cwd), self._pattern(arguments)
        )
        shown = matches[: self._limits.search_results]
        body = "\n".join(shown) or f"No files match {pattern} in {base}."
        if len(matches) > len(shown):
            body += f"\n[... {len(matches) - len(shown)} more matches not shown]"
        return ToolResult(
            text=body, output=(TextOutput(text=body),), raw_output={"matches": len(matches)}
        )

    @staticmethod
    def _pattern(arguments: Mapping[str, object]) -> tuple[str, ...]:
        pattern = Path(text_arg(arguments, "pattern") or "")
        if pattern.is_absolute() or ".." in pattern.parts:
            raise ToolInputError("pattern must be relative to path; put the directory in path.")
        if any("**" in part and part != "**" for part in pattern.parts):
            raise ToolInputError("'**' must be a whole path part, as in 'src/**/*.py'.")
        return tuple(part for part in pattern.parts if part != ".")

    @staticmethod
    def _find(base: Path, boundary: Path, pattern: tuple[str, ...]) -> list[str]:
        """Matches that lie inside `boundary`; symlinks leading out of it are neither
        listed nor entered (see adapters.tools.tree)."""
        if not base.is_dir():
            return []
        entries = walk(base, boundary, lambda parts: glob_may_match_below(pattern, parts))
        return sorted(
            shown(Path(*e.parts)) + ("/" if e.is_dir else "")
            for e in entries
            if glob_match(pattern, e.parts)
        )


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

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        self._regex(arguments)
        mode = arguments.get("output_mode", "content")
        if mode not in ("content", "files_with_matches", "count"):
            raise ToolInputError("output_mode must be content, files_with_matches or count.")
        located = target(arguments, context, default=".")
        return ToolPlan(locations=(str(located.path),), outside_cwd=located.outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        base = target(arguments, context, default=".").path
        limit = min(
            int_arg(arguments, "max_results") or self._limits.search_results,
            self._limits.search_results * 10,
        )
        rows, total, too_big = await asyncio.to_thread(
            self._search,
            base,
            boundary_for(base, context.cwd),
            self._regex(arguments),
            text_arg(arguments, "glob", required=False),
            str(arguments.get("output_mode", "content")),
            limit,
        )
        body = "\n".join(rows) or "No matches."
        if total > len(rows):
            body += f"\n[... {total - len(rows)} more results not shown]"
        raw: dict[str, object] = {"results": total}
        if too_big:
            body += (
                f"\n[Not searched, over {MAX_FILE_BYTES // 2**20} MiB each: "
                + ", ".join(too_big[:20])
                + (f" and {len(too_big) - 20} more" if len(too_big) > 20 else "")
                + "]"
            )
            raw["notSearched"] = len(too_big)
        body = clip(body, self._limits.output_chars)
        return ToolResult(text=body, output=(TextOutput(text=body),), raw_output=raw)

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
    ) -> tuple[list[str], int, list[str]]:
        """(rows shown, how many in all, the files too big to search)."""
        rows: list[str] = []
        total = 0
        too_big: list[str] = []
        for path in regular_files(base, boundary):
            name = str(path.relative_to(base)) if base.is_dir() else str(path)
            if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(path.name, glob)):
                continue
            name = shown(name)
            try:
                hits = _file_hits(path, regex)
            except _TooBig:
                too_big.append(name)
                continue
            except OSError:
                continue
            if not hits:
                continue
            if mode == "content":
                for n, line in hits:
                    total += 1
                    if len(rows) < limit:
                        rows.append(f"{name}:{n}:{line[:500]}")
            else:
                total += 1
                if len(rows) < limit:
                    rows.append(name if mode == "files_with_matches" else f"{name}:{len(hits)}")
        return rows, total, too_big


class _TooBig(Exception):
    pass


def _file_hits(path: Path, regex: re.Pattern[str]) -> list[tuple[int, str]]:
    """The matching lines of a text file (none of a binary one), numbered from 1 as
    read_file numbers them."""
    # O_NONBLOCK: a file swapped for a FIFO since it was listed must not block the search.
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            return []
        if info.st_size > MAX_FILE_BYTES:
            raise _TooBig
        if is_binary(file.read(SNIFF_BYTES)):
            return []
        file.seek(0)
        hits: list[tuple[int, str]] = []
        for number, piece in _pieces(file):
            if hits and hits[-1][0] == number:
                continue  # this line matched already, in an earlier piece
            line = piece.decode("utf-8", errors="replace")
            if regex.search(line):
                hits.append((number, line[:500]))  # all that is shown of it
        return hits


def _pieces(file: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number, piece) for each line without its end, a line longer than PIECE_BYTES
    in several pieces: memory stays bounded whatever the file and its lines."""
    number = 1
    while piece := file.readline(PIECE_BYTES):
        if piece.endswith(b"\n"):
            yield number, piece[:-1].removesuffix(b"\r")
            number += 1
        else:
            yield number, piece  # part of a long line, or the last line without its end
