"""Delete a stored session."""

from application.ports.clock import Clock
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import SessionRegistry
from application.tasks.background_tasks import BackgroundTasks


class DeleteSession:
    """Remove a session and its history; its running turn is cancelled. Unknown ids: no-op."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        clock: Clock,
        tasks: BackgroundTasks,
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._clock = clock
        self._tasks = tasks

    async def execute(self, session_id: str) -> bool:
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
