"""Walking a directory tree without leaving what the user allowed.

A symlink inside the working directory may point anywhere. Listing through it would show
names (and grep contents) from outside the directory without a permission request. So, as
find and ripgrep do by default, a walk never enters a symlinked directory (no loops, no
exponential link mazes, no way out), and it never yields an entry whose real location lies
outside its boundary. Symlinked files and directories that stay inside are listed.
"""

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = frozenset(
    {
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
)


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path  # as reached from the walk's root, symlinks not resolved
    parts: tuple[str, ...]  # relative to the root
    is_dir: bool


def inside(path: Path | str, boundary: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == boundary or real.is_relative_to(boundary)


def boundary_for(base: Path, cwd: str) -> Path:
    """The session's cwd, or the searched directory itself when the user allowed a search
    outside it (the plan flagged it outside_cwd, so the user was asked)."""
    root = Path(os.path.realpath(cwd))
    return root if inside(base, root) else Path(os.path.realpath(base))


def walk(
    root: Path,
    boundary: Path,
    descend: Callable[[tuple[str, ...]], bool] = lambda parts: True,
) -> Iterator[Entry]:
    """Every file and directory under `root` (not root itself), sorted, that lies inside
    `boundary`; version-control and cache directories are skipped, and so are directories
    for which `descend` says no."""
    for folder, dirs, files in os.walk(root):  # followlinks=False: see the module's doc
        here = Path(folder)
        prefix = here.relative_to(root).parts
        kept = []
        for name in sorted(dirs):
            if name in SKIPPED_DIRS or not inside(here / name, boundary):
                continue
            yield Entry(here / name, (*prefix, name), True)
            if descend((*prefix, name)):
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if inside(here / name, boundary):
                yield Entry(here / name, (*prefix, name), False)


def regular_files(root: Path, boundary: Path) -> Iterator[Path]:
    """Regular files under (or at) root inside `boundary`: a FIFO or a device could block a
    search for ever."""
    entries = [root] if root.is_file() else (e.path for e in walk(root, boundary) if not e.is_dir)
    for path in entries:
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError:
            continue
        if regular and inside(path, boundary):
            yield path


def glob_match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether relative path `parts` matches glob `pattern` ('**' spans any number of
    directories, other parts match one name each, case-sensitively). Dynamic programming
    over (pattern, path) positions: no exponential backtracking on many '**'."""
    # reach[j]: the first i pattern parts can match the first j path parts
    reach = [True] + [False] * len(parts)
    for part in pattern:
        if part == "**":
            for j in range(1, len(reach)):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [
                reach[j] and fnmatch.fnmatchcase(parts[j], part) for j in range(len(parts))
            ]
    return reach[-1]


def glob_may_match_below(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether something under directory `parts` could match `pattern`: prunes the walk."""
    if not parts:
        return bool(pattern)
    if not pattern:
        return False
    if pattern[0] == "**":
        return True
    return fnmatch.fnmatchcase(parts[0], pattern[0]) and glob_may_match_below(
        pattern[1:], parts[1:]
    )
