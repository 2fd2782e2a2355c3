"""read_file, list_files, write_file, edit_file."""

from collections.abc import Mapping

from adapters.tools.base import (
    Limits,
    Tool,
    ToolInputError,
    int_arg,
    schema,
    target,
    text_arg,
    workspace_of,
)
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from application.ports.workspace import PathKind, Window, Workspace
from domain.text import is_binary, shown
from domain.tool_call import DiffOutput, TextOutput

PATH: dict[str, object] = {
    "type": "string",
    "description": "File path, absolute or relative to the working directory.",
}


async def _current_text(workspace: Workspace, path: str) -> str | None:
    """The file's text as the user sees it (the editor's buffer, where it lends it); None
    for a new file."""
    text = await workspace.read_text(path)
    if text is not None and is_binary(text[:8192].encode("utf-8", "surrogatepass")):
        raise ToolInputError(f"{path} is a binary file; not changed.")
    return text


async def _text_replaced(workspace: Workspace, path: str) -> str | None:
    """What write_file replaces; None when it creates the file. A file missing on disk is
    not asked of the editor: it would answer a read of a file that does not exist yet with
    an error, and show it to the user as one (an unsaved buffer there is overwritten anyway:
    only the diff shown would differ)."""
    kind = await workspace.kind(path)
    if kind is PathKind.DIRECTORY:
        raise ToolInputError(f"{path} is a directory.")
    if kind is PathKind.MISSING:
        return None
    return await _current_text(workspace, path)


def _lines_asked(arguments: Mapping[str, object]) -> tuple[int, int | None]:
    start = max(1, int_arg(arguments, "start_line") or 1)
    end = int_arg(arguments, "end_line")
    if end is not None and end < start:
        raise ToolInputError("end_line must not be before start_line.")
    return start, end


class ReadFile(Tool):
    definition = ToolDefinition(
        name="read_file",
        description="Read a text file, with line numbers. Use start_line/end_line (1-based, "
        "inclusive) for parts of long files. One call returns at most a bounded number of "
        "lines and characters; the result says where to continue.",
        input_schema=schema(
            {
                "path": PATH,
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            ["path"],
        ),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        located = target(arguments, context)
        _lines_asked(arguments)  # validates early: bad input fails without asking
        return ToolPlan(locations=(str(located.path),), outside_cwd=located.outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        path = target(arguments, context).path
        start, end = _lines_asked(arguments)
        window = Window(lines=self._limits.read_lines, chars=self._limits.output_chars)
        excerpt = await workspace_of(context).read_lines(str(path), start, end, window)
        body = excerpt.render(start, end)
        return ToolResult(
            text=body,
            output=(TextOutput(text=body),),
            raw_output={
                "path": shown(path),
                "startLine": start,
                "endLine": excerpt.last,
                "totalLines": excerpt.total,
            },
        )


class ListFiles(Tool):
    definition = ToolDefinition(
        name="list_files",
        description="List a directory (default: the working directory). Directories end with '/'.",
        input_schema=schema({"path": PATH}, []),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        located = target(arguments, context, default=".")
        return ToolPlan(locations=(str(located.path),), outside_cwd=located.outside)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        path = target(arguments, context, default=".").path
        workspace = workspace_of(context)
        if await workspace.kind(str(path)) is not PathKind.DIRECTORY:
            return ToolResult(text=f"{shown(path)} is not a directory.", is_error=True)
        entries = sorted(await workspace.list_dir(str(path)), key=str.lower)
        listed = entries[: self._limits.list_entries]
        body = "\n".join(listed) or "(empty directory)"
        if len(entries) > len(listed):
            body += f"\n[... {len(entries) - len(listed)} more entries not shown]"
        return ToolResult(
            text=body,
            output=(TextOutput(text=body),),
            raw_output={"path": shown(path), "entries": len(entries)},
        )


class WriteFile(Tool):
    definition = ToolDefinition(
        name="write_file",
        description="Create or overwrite a text file with the given content.",
        input_schema=schema({"path": PATH, "content": {"type": "string"}}, ["path", "content"]),
    )

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        located = target(arguments, context)
        content = text_arg(arguments, "content", allow_empty=True) or ""
        workspace = workspace_of(context)
        old = await _text_replaced(workspace, str(located.path))
        return ToolPlan(
            locations=(str(located.path),),
            outside_cwd=located.outside,
            preview=(DiffOutput(path=str(located.path), old_text=old, new_text=content),),
        )

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        path = target(arguments, context).path
        content = text_arg(arguments, "content", allow_empty=True) or ""
        workspace = workspace_of(context)
        old = await _text_replaced(workspace, str(path))
        await workspace.write_text(str(path), content)
        verb = "Created" if old is None else "Wrote"
        return ToolResult(
            text=f"{verb} {path} ({len(content.encode())} bytes).",
            output=(DiffOutput(path=str(path), old_text=old, new_text=content),),
            raw_output={"path": str(path), "bytes": len(content.encode()), "created": old is None},
        )


class EditFile(Tool):
    definition = ToolDefinition(
        name="edit_file",
        description="Replace old_string with new_string in a file. old_string must match "
        "exactly once unless replace_all is true.",
        input_schema=schema(
            {
                "path": PATH,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            ["path", "old_string", "new_string"],
        ),
    )

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        located = target(arguments, context)
        old, new = await self._edit(workspace_of(context), str(located.path), arguments)
        return ToolPlan(
            locations=(str(located.path),),
            outside_cwd=located.outside,
            preview=(DiffOutput(path=str(located.path), old_text=old, new_text=new),),
        )

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        path = target(arguments, context).path
        workspace = workspace_of(context)
        # Again: the file may have changed meanwhile.
        old, new = await self._edit(workspace, str(path), arguments)
        await workspace.write_text(str(path), new)
        count = old.count(str(arguments["old_string"]))
        return ToolResult(
            text=f"Edited {path}: {count} replacement(s).",
            output=(DiffOutput(path=str(path), old_text=old, new_text=new),),
            raw_output={"path": str(path), "replacements": count},
        )

    @staticmethod
    async def _edit(
        workspace: Workspace, path: str, arguments: Mapping[str, object]
    ) -> tuple[str, str]:
        old_string = text_arg(arguments, "old_string") or ""
        new_string = text_arg(arguments, "new_string", allow_empty=True) or ""
        replace_all = arguments.get("replace_all") is True
        # Missing on disk may still be an editor's buffer never saved: read_text says.
        if await workspace.kind(path) not in (PathKind.FILE, PathKind.MISSING):
            raise ToolInputError(f"{path} is not a regular file.")
        if old_string == new_string:
            raise ToolInputError("old_string and new_string are the same; nothing to change.")
        text = await _current_text(workspace, path)
        if text is None:
            raise ToolInputError(f"{path} does not exist.")
        count = text.count(old_string)
        if count == 0:
            raise ToolInputError(f"old_string was not found in {path}.")
        if count > 1 and not replace_all:
            raise ToolInputError(
                f"old_string appears {count} times in {path}; include more "
                "context to make it unique, or set replace_all."
            )
        return text, text.replace(old_string, new_string)
