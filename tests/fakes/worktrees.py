"""Worktrees in memory: repositories are the paths a test names; a worktree is a path
`/worktrees/<short>` with its own files (a dict), changes and commits a test sets."""

import posixpath
from dataclasses import dataclass, field

from application.ports.worktrees import (
    Made,
    Merged,
    NoRepository,
    Summary,
    Unmerged,
    Worktrees,
)
from domain.worktree import BRANCH_PREFIX, Worktree


@dataclass
class FakeWorktrees(Worktrees):
    repositories: set[str] = field(default_factory=set)  # top directories
    made: dict[str, Worktree] = field(default_factory=dict)  # path -> worktree
    unmerged_work: dict[str, Unmerged] = field(default_factory=dict)  # path -> what it holds
    removed: list[str] = field(default_factory=list)
    forked: list[tuple[str, str]] = field(default_factory=list)  # (source path, new path)
    summaries: dict[str, Summary] = field(default_factory=dict)  # path -> what it holds
    merges: dict[str, Merged] = field(default_factory=dict)  # path -> how a merge goes
    merged: list[str] = field(default_factory=list)

    async def make(self, cwd: str, branch: str) -> Made:
        top = next((r for r in self.repositories if cwd == r or cwd.startswith(r + "/")), None)
        if top is None:
            raise NoRepository(f"{cwd} is not inside a git repository with a commit")
        worktree = self.add(branch, base="base0")
        return Made(worktree=worktree, cwd=worktree.path + cwd[len(top) :])

    async def fork(self, source: Worktree, cwd: str, branch: str) -> Made:
        worktree = self.add(branch, base="head1")
        self.forked.append((source.path, worktree.path))
        return Made(worktree=worktree, cwd=worktree.path + cwd[len(source.path) :])

    def of(self, cwd: str) -> Worktree | None:
        return next((w for p, w in self.made.items() if cwd == p or cwd.startswith(p + "/")), None)

    async def unmerged(self, worktree: Worktree) -> Unmerged:
        return self.unmerged_work.get(worktree.path, Unmerged(changes=0, commits=0))

    async def remove(self, worktree: Worktree) -> None:
        self.removed.append(worktree.path)
        self.made.pop(worktree.path, None)

    async def summary(self, worktree: Worktree) -> Summary:
        return self.summaries.get(worktree.path, Summary(commits=(), changed="", untracked=()))

    async def merge(self, worktree: Worktree) -> Merged:
        self.merged.append(worktree.path)
        return self.merges.get(worktree.path, Merged(done=True, into="main", how="a fast-forward"))

    def add(self, branch: str, base: str) -> Worktree:
        path = posixpath.join("/worktrees", branch.removeprefix(BRANCH_PREFIX))
        worktree = Worktree(path=path, branch=branch, base=base)
        self.made[path] = worktree
        return worktree
