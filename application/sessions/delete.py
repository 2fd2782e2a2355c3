"""Delete a stored session (and its worktree, asking first when it holds unmerged work)."""

from application.errors import WorktreeRefused
from application.ports.clock import Clock
from application.ports.unit_of_work import UnitOfWork
from application.ports.worktrees import Worktrees
from application.runtime.registry import SessionRegistry
from application.tasks.background_tasks import BackgroundTasks
from domain.worktree import Worktree


class DeleteSession:
    """Remove a session and its history; its running turn is cancelled. Unknown ids: no-op.

    A session working in its own worktree takes it (and its branch) with it; when that
    holds changes or commits no other branch has, the delete is refused (WorktreeRefused,
    naming them) unless `discard_worktree` says to lose them: the client asks its user,
    then deletes again saying so. Nothing is deleted before that answer."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        clock: Clock,
        tasks: BackgroundTasks,
        worktrees: Worktrees,
    ) -> None:
        self._worktrees = worktrees
        self._uow = uow
        self._registry = registry
        self._clock = clock
        self._tasks = tasks

    async def execute(self, session_id: str, *, discard_worktree: bool = False) -> bool:
        worktree = await self._worktree(session_id)
        if worktree is not None and not discard_worktree:
            unmerged = await self._worktrees.unmerged(worktree)
            if unmerged:
                raise WorktreeRefused(
                    f"The session's worktree ({worktree.path}, branch {worktree.branch}) holds "
                    f"{unmerged.changes} uncommitted change(s) and {unmerged.commits} commit(s) "
                    "no other branch has: deleting the session would lose them. Merge them "
                    "first, or delete again with _meta.iac_code.discardWorktree: true.",
                    worktree=worktree.path,
                    branch=worktree.branch,
                    uncommitted=unmerged.changes,
                    unmergedCommits=unmerged.commits,
                    confirm="_meta.iac_code.discardWorktree",
                )
        deleted = await self._delete(session_id)
        if worktree is not None:
            await self._worktrees.remove(worktree)
        return deleted

    async def _worktree(self, session_id: str) -> Worktree | None:
        active = self._registry.find(session_id)
        session = active.session if active is not None else None
        if session is None:
            async with self._uow as uow:
                session = await uow.sessions.get(session_id)  # type: ignore[arg-type]
        return None if session is None else self._worktrees.of(session.cwd)

    async def _delete(self, session_id: str) -> bool:
        await self._tasks.end_session(session_id, record=False)  # nothing more of them stored
        await self._registry.close(session_id)  # its last writes land before the delete
        await self._close_children(session_id)
        async with self._uow as uow:
            deleted = await uow.sessions.delete(session_id, self._clock.now())  # type: ignore[arg-type]
            await uow.commit()
        return deleted

    async def _close_children(self, session_id: str) -> None:
        """Its sub-agents' sessions open here go with it (the store deletes them)."""
        for open_id in self._registry.open_ids():
            active = self._registry.find(open_id)
            spawn = active.session.spawn if active is not None else None
            if spawn is not None and spawn.parent_id == session_id:
                await self._registry.close(open_id)
