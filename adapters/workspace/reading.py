"""read_file's reading: only what is asked, in bounded memory, whatever the file's size.

Lines are streamed, reading stops at the last line shown, and one call returns at most a
window of lines and characters; the result tells the model where to continue.
"""

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from application.ports.workspace import Excerpt, Window, WorkspaceError
from domain.text import is_binary, shown

__all__ = ["Excerpt", "Window", "excerpt_of_text", "read_excerpt"]

SNIFF_BYTES = 8192
COUNT_BYTES = 64 * 2**20  # files up to this size get their lines counted for "of N"
SKIP_CHUNK = 2**16


def read_excerpt(path: Path, start: int, end: int | None, window: Window) -> Excerpt:
    # O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are read.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WorkspaceError(f"{shown(path)} is not a regular file.")
        if is_binary(file.read(SNIFF_BYTES)):
            raise WorkspaceError(
                f"{shown(path)} is a binary file ({info.st_size} bytes); not shown."
            )
        file.seek(0)
        return _excerpt(file, info.st_size, start, end, window)


def _excerpt(file: BinaryIO, size: int, start: int, end: int | None, window: Window) -> Excerpt:
    shown_lines: list[str] = []
    used = 0
    number = 0
    capped = False
    for number, (raw, whole) in enumerate(_lines(file, window.chars), 1):
        if number < start:
            continue
        text = raw.decode("utf-8", errors="replace")
        if not whole:
            text += f" [... line cut at {window.chars} bytes]"
        if shown_lines and (len(shown_lines) >= window.lines or used + len(text) > window.chars):
            capped = True
            break
        shown_lines.append(f"{number:6}\t{text}")
        used += len(text)
        if number == end:
            break
    else:  # the end of the file
        return Excerpt(tuple(shown_lines), number, number, size, False, window)
    last = start + len(shown_lines) - 1
    # Line `number` has been read (shown, or the first one left out): count what follows.
    total = number + _count_rest(file) if size <= COUNT_BYTES else None
    return Excerpt(tuple(shown_lines), last, total, size, capped, window)


def _lines(file: BinaryIO, limit: int) -> Iterator[tuple[bytes, bool]]:
    """Each line without its end, cut to `limit` bytes (with False when cut); a long line's
    rest is skipped in bounded chunks, never held whole."""
    while chunk := file.readline(limit + 1):
        if chunk.endswith(b"\n"):
            yield chunk[:-1].removesuffix(b"\r"), True
        elif len(chunk) <= limit:
            yield chunk, True  # the last line, without a newline
        else:
            while (rest := file.readline(SKIP_CHUNK)) and not rest.endswith(b"\n"):
                pass
            yield chunk[:limit], False


def _count_rest(file: BinaryIO) -> int:
    """Lines from the file's position to its end."""
    count = 0
    last = b"\n"
    while block := file.read(2**20):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")


def excerpt_of_text(
    text: str, start: int, end: int | None, window: Window, *, whole: bool
) -> Excerpt:
    """The same excerpt from text read elsewhere (the editor's buffer), which begins at line
    `start`; `whole` when it runs to the file's end. A file's text, not its bytes: lines are
    cut at `window.chars` characters and the size is unknown."""
    if is_binary(text[:SNIFF_BYTES].encode("utf-8", "surrogatepass")):
        raise WorkspaceError("The file is binary; not shown.")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends the last line
    shown_lines: list[str] = []
    used = 0
    capped = False
    for number, line in enumerate(lines, start):
        line = line.removesuffix("\r")
        if len(line) > window.chars:
            line = line[: window.chars] + f" [... line cut at {window.chars} characters]"
        if shown_lines and (len(shown_lines) >= window.lines or used + len(line) > window.chars):
            capped = True
            break
        shown_lines.append(f"{number:6}\t{line}")
        used += len(line)
        if number == end:
            break
    last = start + len(shown_lines) - 1
    ran_out = whole and not capped and len(shown_lines) == len(lines)
    total = last if ran_out and (shown_lines or start == 1) else None
    return Excerpt(tuple(shown_lines), last, total, None, capped, window)
