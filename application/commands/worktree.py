"""/worktree: the session's own worktree — what it holds against its base — and
`/worktree merge`, which merges its branch back into the repository's main checkout."""

from application.ports.worktrees import Merged, Summary, Worktrees
from application.runtime.command_registry import CommandInput
from domain.commands import CommandSpec
from domain.worktree import Worktree

USAGE = "Usage: `/worktree` shows the worktree's changes, `/worktree merge` merges them back."
NONE = (
    "This session works in the directory it was opened in, not in a worktree of its own "
    '(a new session gets one with `_meta.iac_code.isolation: "worktree"`).'
)


class WorktreeCommand:
    spec = CommandSpec(
        name="worktree",
        description="This session's own git worktree: its changes against its base; "
        "`merge` merges its branch back",
        hint="merge",
    )

    def __init__(self, *, worktrees: Worktrees) -> None:
        self._worktrees = worktrees

    async def run(self, command: CommandInput) -> str:
        worktree = self._worktrees.of(command.session.cwd)
        if worktree is None:
            return NONE
        words = command.argument.split()
        if not words:
            return _shown(worktree, await self._worktrees.summary(worktree))
        if words == ["merge"]:
            return await self._merge(worktree)
        return USAGE

    async def _merge(self, worktree: Worktree) -> str:
        unmerged = await self._worktrees.unmerged(worktree)
        if unmerged.changes:
            return (
                f"Not merged: the worktree has {unmerged.changes} uncommitted change(s). "
                "Commit them on its branch first; only commits are merged."
            )
        return _merged(worktree, await self._worktrees.merge(worktree))


def _shown(worktree: Worktree, summary: Summary) -> str:
    lines = [
        f"Worktree `{worktree.path}`, branch `{worktree.branch}`, "
        f"from `{(worktree.base or 'its start')[:12]}`."
    ]
    if summary.commits:
        lines.append(f"Commits ({len(summary.commits)}):")
        lines += [f"- {c}" for c in summary.commits]
    lines.append(
        f"Changed against its base:\n{summary.changed}" if summary.changed else "No file changed."
    )
    if summary.untracked:
        lines.append("New, not yet added: " + ", ".join(summary.untracked))
    return "\n".join(lines)


def _merged(worktree: Worktree, merged: Merged) -> str:
    if merged.done:
        return f"Merged `{worktree.branch}` into `{merged.into}`: {merged.how}."
    said = f"Not merged into `{merged.into}`: {merged.why}"
    if merged.conflicts:
        said += "\nConflicting files (the merge was aborted, nothing changed): " + ", ".join(
            merged.conflicts
        )
    return said
