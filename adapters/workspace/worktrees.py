"""Session worktrees with the machine's git: made under the server's directory
(`<config dir>/worktrees/<repository>-<short id>`), each on its own `iac-code/<short id>`
branch, the commit it started from kept beside git's own record of it (`iac-code-base` in
the worktree's administrative directory), so that finding a session's worktree from its
directory (`worktree_at`) reads three small files and runs no git."""

import asyncio
import os
import shutil
from pathlib import Path

from application.ports.worktrees import (
    Made,
    Merged,
    NoRepository,
    Summary,
    Unmerged,
    Worktrees,
)
from domain.worktree import BRANCH_PREFIX, Worktree

BASE_FILE = "iac-code-base"
GIT_SECONDS = 120.0  # a checkout of a large repository takes a while; a stuck git does not


class GitFailed(Exception):
    pass


async def _git(*arguments: str, cwd: str, check: bool = True) -> str:
    process = await asyncio.create_subprocess_exec(
        "git",
        *arguments,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), GIT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise GitFailed(f"git {arguments[0]} took longer than {GIT_SECONDS:g} s") from None
    if check and process.returncode != 0:
        said = err.decode(errors="replace").strip() or f"exit {process.returncode}"
        raise GitFailed(f"git {arguments[0]}: {said}")
    return out.decode(errors="replace").strip()


# A merge commit needs a committer: the repository's own, else this one (never a prompt).
_MERGER = ("-c", "user.name=iac-code", "-c", "user.email=iac-code@localhost")


def _gitdir(top: str) -> str | None:
    """A linked worktree's administrative directory, from its `.git` file."""
    try:
        text = Path(top, ".git").read_text(encoding="utf-8", errors="replace")
    except OSError:  # no file (a directory: a main worktree), or none at all
        return None
    key, _, value = text.strip().partition(":")
    if key != "gitdir" or not value.strip():
        return None
    return os.path.join(top, value.strip())


def _checkout_top(directory: str) -> str | None:
    """The nearest directory at or above `directory` holding a `.git` (a file in a linked
    worktree, a directory in a main checkout); None: not in one."""
    current = os.path.abspath(directory)
    while not os.path.lexists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return current


def worktree_at(cwd: str) -> Worktree | None:
    """The session worktree `cwd` lies in (its top directory or below); None: none."""
    top = _checkout_top(cwd)
    return None if top is None else _session_worktree(top)


def _session_worktree(top: str) -> Worktree | None:
    gitdir = _gitdir(top)
    if gitdir is None:
        return None
    try:
        head = Path(gitdir, "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    ref = head.removeprefix("ref: refs/heads/")
    if ref == head or not ref.startswith(BRANCH_PREFIX):
        return None
    try:
        base: str | None = Path(gitdir, BASE_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        base = None
    return Worktree(path=top, branch=ref, base=base)


def linked_repository(directory: str) -> tuple[str, str] | None:
    """For a directory inside a linked worktree (any, not only a session's): the git
    directory its commits go to and the worktree's own administrative directory, which a
    sandboxed `git` in it must reach; None elsewhere."""
    top = _checkout_top(directory)
    if top is None:
        return None
    gitdir, common = _gitdir(top), common_dir(top)
    if gitdir is None or common is None:
        return None
    return common, os.path.realpath(gitdir)


def common_dir(top: str) -> str | None:
    """The repository's own git directory a linked worktree writes its commits to."""
    gitdir = _gitdir(top)
    if gitdir is None:
        return None
    try:
        relative = Path(gitdir, "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return os.path.realpath(os.path.join(gitdir, relative))


class GitWorktrees(Worktrees):
    def __init__(self, root: Path) -> None:
        self._root = root

    def of(self, cwd: str) -> Worktree | None:
        return worktree_at(cwd)

    async def make(self, cwd: str, branch: str) -> Made:
        try:
            top = await _git("rev-parse", "--show-toplevel", cwd=cwd)
            head = await _git("rev-parse", "--verify", "HEAD^{commit}", cwd=top)
        except (GitFailed, OSError) as exc:
            raise NoRepository(
                f"{cwd} is not inside a git repository with a commit to start from ({exc})"
            ) from None
        path = await self._add(top, Path(top).name, branch, head)
        place = _same_place(cwd, top, path)
        await asyncio.to_thread(os.makedirs, place, exist_ok=True)  # an untracked directory
        return Made(worktree=self._recorded(path, branch, head), cwd=place)

    async def fork(self, source: Worktree, cwd: str, branch: str) -> Made:
        head = await _git("rev-parse", "--verify", "HEAD", cwd=source.path)
        repository = common_dir(source.path)
        label = Path(repository).parent.name if repository else Path(source.path).name
        path = await self._add(source.path, label, branch, head)
        changes = await _git("stash", "create", cwd=source.path)  # the working tree, as a commit
        if changes:
            await _git("stash", "apply", changes, cwd=path)
        listed = await _git("ls-files", "--others", "--exclude-standard", "-z", cwd=source.path)
        await asyncio.to_thread(_copy_new_files, source.path, path, listed)
        worktree = self._recorded(path, branch, head)
        place = _same_place(cwd, source.path, path)
        await asyncio.to_thread(os.makedirs, place, exist_ok=True)
        return Made(worktree=worktree, cwd=place)

    async def unmerged(self, worktree: Worktree) -> Unmerged:
        status = await _git("status", "--porcelain", "--untracked-files=all", cwd=worktree.path)
        ahead = await _git(
            "rev-list",
            "--count",
            worktree.branch,
            "--not",
            f"--exclude={worktree.branch}",  # (no refs/heads/ before --branches)
            "--branches",
            cwd=worktree.path,
        )
        return Unmerged(changes=len(status.splitlines()), commits=int(ahead or 0))

    async def remove(self, worktree: Worktree) -> None:
        repository = common_dir(worktree.path)
        if repository is None:
            return
        await _git("worktree", "remove", "--force", worktree.path, cwd=repository)
        await _git("branch", "-D", worktree.branch, cwd=repository)

    async def summary(self, worktree: Worktree) -> Summary:
        base = worktree.base or "HEAD"
        log = await _git("log", "--oneline", "--no-decorate", f"{base}..HEAD", cwd=worktree.path)
        changed = await _git("diff", "--stat", base, cwd=worktree.path)
        untracked = await _git("ls-files", "--others", "--exclude-standard", cwd=worktree.path)
        return Summary(
            commits=tuple(filter(None, log.splitlines())),
            changed=changed,
            untracked=tuple(filter(None, untracked.splitlines())),
        )

    async def merge(self, worktree: Worktree) -> Merged:
        main = await self._main_checkout(worktree)
        into = await _git("branch", "--show-current", cwd=main)
        if not into:
            return Merged(done=False, into="(none)", why="the main checkout is on no branch")
        identity = () if await _git("config", "user.email", cwd=main, check=False) else _MERGER
        before = await _git("rev-parse", "HEAD", cwd=main)
        try:
            await _git(*identity, "merge", "--no-edit", worktree.branch, cwd=main)
        except GitFailed as exc:
            conflicts = await _git("diff", "--name-only", "--diff-filter=U", cwd=main, check=False)
            await _git("merge", "--abort", cwd=main, check=False)
            return Merged(
                done=False, into=into, why=str(exc), conflicts=tuple(conflicts.splitlines())
            )
        after = await _git("rev-list", "--parents", "-n", "1", "HEAD", cwd=main)
        if after.split()[0] == before:
            return Merged(done=True, into=into, how="already merged: nothing to do")
        merge_commit = len(after.split()) > 2  # a commit with two parents
        return Merged(
            done=True, into=into, how="a merge commit" if merge_commit else "a fast-forward"
        )

    async def _main_checkout(self, worktree: Worktree) -> str:
        listing = await _git("worktree", "list", "--porcelain", cwd=worktree.path)
        first = listing.splitlines()[0]  # the main worktree is listed first
        return first.removeprefix("worktree ").strip()

    async def _add(self, repository: str, label: str, branch: str, head: str) -> str:
        name = f"{label}-{branch.removeprefix(BRANCH_PREFIX)}"
        path = str(self._root / name)
        await asyncio.to_thread(self._root.mkdir, parents=True, exist_ok=True)
        await _git("worktree", "add", "--quiet", "-b", branch, path, head, cwd=repository)
        return path

    @staticmethod
    def _recorded(path: str, branch: str, base: str) -> Worktree:
        gitdir = _gitdir(path)
        if gitdir is not None:
            Path(gitdir, BASE_FILE).write_text(base + "\n", encoding="utf-8")
        return Worktree(path=path, branch=branch, base=base)


def _same_place(cwd: str, top: str, path: str) -> str:
    """Where `cwd` (inside `top`) is in the worktree at `path`."""
    inside = os.path.relpath(os.path.realpath(cwd), os.path.realpath(top))
    return path if inside == "." else os.path.join(path, inside)


def _copy_new_files(source: str, target: str, listed: str) -> None:
    for name in filter(None, listed.split("\0")):
        origin = Path(source, name)
        if origin.is_symlink() or not origin.is_file():
            continue
        destination = Path(target, name)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, destination)
