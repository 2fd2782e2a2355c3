"""Git worktrees, one per session that asks for one (`isolation: worktree`)."""

from abc import abstractmethod
from dataclasses import dataclass
from typing import Protocol

from domain.worktree import Worktree


class NoRepository(Exception):
    """The directory is not inside a git repository with a commit to start from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Unmerged:
    """What deleting a worktree would lose."""

    changes: int  # files changed or added and not committed
    commits: int  # commits on its branch that no other branch holds

    def __bool__(self) -> bool:
        return bool(self.changes or self.commits)


@dataclass(frozen=True, slots=True, kw_only=True)
class Made:
    worktree: Worktree
    cwd: str  # where the session works: the same place inside it as asked outside it


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """What a worktree holds against its base, for the user."""

    commits: tuple[str, ...]  # one line each, newest first
    changed: str  # `git diff --stat` of its files (committed and not) against its base
    untracked: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Merged:
    """How a merge back went: done (`how`: fast-forward or a merge commit), or not (`why`,
    and the files in conflict); a merge that did not go through leaves nothing changed."""

    done: bool
    into: str  # the main checkout's branch
    how: str = ""
    why: str = ""
    conflicts: tuple[str, ...] = ()


class Worktrees(Protocol):
    @abstractmethod
    async def make(self, cwd: str, branch: str) -> Made:
        """A worktree of the repository holding `cwd`, on a new `branch` from its HEAD.
        Raises NoRepository."""

    @abstractmethod
    async def fork(self, source: Worktree, cwd: str, branch: str) -> Made:
        """A worktree on a new `branch` holding `source`'s current files (its commits, its
        uncommitted changes and its new files)."""

    @abstractmethod
    def of(self, cwd: str) -> Worktree | None:
        """The session worktree `cwd` lies in; None: none (cheap: no git process)."""

    @abstractmethod
    async def unmerged(self, worktree: Worktree) -> Unmerged: ...

    @abstractmethod
    async def remove(self, worktree: Worktree) -> None:
        """The worktree and its branch, whatever they hold."""

    @abstractmethod
    async def summary(self, worktree: Worktree) -> Summary: ...

    @abstractmethod
    async def merge(self, worktree: Worktree) -> Merged:
        """Merge the worktree's branch into the repository's main checkout: a fast-forward
        where it can, else a merge commit; never forced, a conflict aborted and reported."""
