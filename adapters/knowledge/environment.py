"""Facts about this machine and a directory, for the model's environment context."""

import os
import platform

from domain.knowledge import LISTING_ENTRIES


def platform_name() -> str:
    return f"{platform.system()} {platform.release()} ({platform.machine()})"


def shell() -> str:
    return os.environ.get("SHELL") or "/bin/sh"


def listing(cwd: str) -> tuple[tuple[str, ...], int]:
    """cwd's entries, directories with a trailing '/', hidden ones too but not `.git`,
    sorted case-insensitively: at most LISTING_ENTRIES, and how many were left out."""
    try:
        with os.scandir(cwd) as entries:
            names = [_shown(entry) for entry in entries if entry.name != ".git"]
    except OSError:
        return (), 0
    names.sort(key=lambda name: (name.casefold(), name))
    return tuple(names[:LISTING_ENTRIES]), max(0, len(names) - LISTING_ENTRIES)


def _shown(entry: os.DirEntry[str]) -> str:
    # Bytes that are not UTF-8 as \xNN, and no line breaks: one name, one line.
    name = os.fsencode(entry.name).decode("utf-8", "backslashreplace")
    name = name.encode("unicode_escape").decode("ascii") if not name.isprintable() else name
    try:
        is_directory = entry.is_dir()  # a symlink to a directory is listed as one
    except OSError:
        is_directory = False
    return name + ("/" if is_directory else "")
