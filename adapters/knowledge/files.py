"""Reading the small text files the agent is told about: safely, bounded, never raising."""

import logging
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from domain.knowledge import CUT_MARKER, INSTRUCTION_CAP

log = logging.getLogger(__name__)

# An instruction file is cut at INSTRUCTION_CAP characters anyway: more than this is never
# read, so a huge file costs neither memory nor time. Past it, the marker counts the unread
# rest in bytes (exact for ASCII).
READ_LIMIT = 1024 * 1024
_BINARY_SAMPLE = 8192


@dataclass(frozen=True, slots=True)
class TextFile:
    text: str
    unread: int  # bytes past READ_LIMIT
    identity: tuple[int, int]  # (device, inode): the same file by any path


def read_text_file(path: str) -> TextFile | None:
    """The file's text (non-UTF-8 bytes replaced), or None when it is missing, not a
    regular file (directories, FIFOs, devices; symlinks count as what they point to),
    unreadable or binary."""
    try:
        # O_NONBLOCK: a FIFO's open would wait for a writer; fstat then turns it away.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(READ_LIMIT)
    except OSError as error:
        log.info("cannot read %s: %s", path, error)
        return None
    finally:
        os.close(fd)
    if b"\0" in data[:_BINARY_SAMPLE]:
        log.info("%s looks binary: left out", path)
        return None
    unread = max(0, info.st_size - len(data))
    return TextFile(
        text=data.decode("utf-8", errors="replace"),
        unread=unread,
        identity=(info.st_dev, info.st_ino),
    )


def capped(text: str, unread: int, path: str) -> tuple[str, bool]:
    """At most INSTRUCTION_CAP characters of `text`, then CUT_MARKER when anything is cut."""
    cut = max(0, len(text) - INSTRUCTION_CAP) + unread
    if not cut:
        return text, False
    return text[:INSTRUCTION_CAP] + CUT_MARKER.format(cut=cut, path=path), True


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...


Named = TypeVar("Named", bound=_Named)


def first_by_name(
    directories: Iterable[str], found_in: Callable[[str], list[Named]], kind: str
) -> tuple[Named, ...]:
    """What `found_in` finds in each directory, sorted by name; on a name found twice the
    earlier directory wins (a project's over the user's), and the loser is logged."""
    found: dict[str, Named] = {}
    for directory in directories:
        for item in found_in(directory):
            if item.name in found:
                log.info("%s %s of %s: %s wins", kind, item.name, item.path, found[item.name].path)
                continue
            found[item.name] = item
    return tuple(sorted(found.values(), key=lambda item: item.name))
