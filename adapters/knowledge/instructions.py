"""Which AGENTS.md / IAC-CODE.md files apply where, read fresh on every call."""

import os
from pathlib import PurePath

from adapters.knowledge.files import capped, read_text_file
from domain.knowledge import INSTRUCTION_NAMES, InstructionFile, InstructionScope


def repository_root(directory: str) -> str | None:
    """The nearest directory from `directory` up holding a `.git` entry (a directory, or
    the file a worktree or submodule has)."""
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def project_directories(cwd: str) -> list[str]:
    """From the repository root (or the file system root outside one) down to cwd."""
    top = repository_root(cwd)
    chain = [cwd]
    while chain[-1] != top:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    return chain[::-1]


def directories_below(path: str, cwd: str) -> list[str]:
    """The directories strictly below cwd down to `path`'s own (`path` itself when it is a
    directory), outermost first, named under cwd as given; none when `path` is not below
    cwd. Compared by real path: `..` and symlinks cannot lead out."""
    real_cwd = os.path.realpath(cwd)
    target = os.path.realpath(os.path.join(cwd, path))
    if not os.path.isdir(target):
        target = os.path.dirname(target)
    try:
        parts = PurePath(target).relative_to(real_cwd).parts
    except ValueError:
        return []
    return [os.path.join(cwd, *parts[:depth]) for depth in range(1, len(parts) + 1)]


class InstructionReader:
    """Reads instruction files of one call, each file once however it is reached."""

    def __init__(self) -> None:
        self._seen: set[tuple[int, int]] = set()

    def directory(self, directory: str, scope: InstructionScope) -> list[InstructionFile]:
        found = (self.file(os.path.join(directory, name), scope) for name in INSTRUCTION_NAMES)
        return [file for file in found if file is not None]

    def file(self, path: str, scope: InstructionScope) -> InstructionFile | None:
        read = read_text_file(path)
        if read is None or read.identity in self._seen or not read.text.strip():
            return None
        self._seen.add(read.identity)
        text, truncated = capped(read.text, read.unread, path)
        return InstructionFile(path=path, scope=scope, text=text, truncated=truncated)


def instruction_files(config_dir: str, cwd: str) -> tuple[InstructionFile, ...]:
    reader = InstructionReader()
    files = reader.directory(config_dir, InstructionScope.USER)
    for directory in project_directories(cwd):
        files += reader.directory(directory, InstructionScope.PROJECT)
    return tuple(files)


def nested_instruction_files(path: str, cwd: str) -> tuple[InstructionFile, ...]:
    reader = InstructionReader()
    return tuple(
        file
        for directory in directories_below(path, cwd)
        for file in reader.directory(directory, InstructionScope.DIRECTORY)
    )
