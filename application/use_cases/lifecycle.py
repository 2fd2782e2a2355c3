from application.runtime import SessionRegistry
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.subagent_runs import SubagentRuns
from application.use_cases.turn_lease import TurnLeasing
from domain.ids import SessionId


class CancelTurn:
    """Ask the running turn of a session to stop. Unknown or idle sessions: nothing happens.
    A running sub-agent's child session is cancelled alone (`child`); its parent goes on."""

    def __init__(
        self,
        *,
        registry: SessionRegistry,
        leasing: TurnLeasing | None = None,
        children: SubagentRuns | None = None,
    ) -> None:
        self._registry = registry
        self._leasing = leasing
        self._children = children

    def parent_of(self, session_id: str) -> SessionId | None:
        """The parent of a child session running here (None: not one); whoever may
        cancel the parent may cancel it."""
        return self._children.parent_of(session_id) if self._children is not None else None

    def child(self, session_id: str) -> bool:
        return self._children is not None and self._children.cancel(session_id)

    def execute(self, session_id: str) -> bool:
        """Cancel the turn running in this process. False: none runs here."""
        active = self._registry.find(session_id)
        if active is None or not active.busy:
            return False
        active.cancel()
        return True

    async def anywhere(self, session_id: str) -> None:
        """Cancel the turn wherever it runs: here at once, in another process through its
        lease (its holder sees the request at its next poll)."""
        if not self.execute(session_id) and self._leasing is not None:
            await self._leasing.request_cancel(SessionId(session_id))


class CloseSession:
    """Drop a session from memory, cancelling its running turn. History stays. Idempotent.

    With `tasks` (`session/close` from its last client), its background tasks are killed
    too; without (the room closing a session its last client's connection left), they go
    on: they belong to the session, and a client attaching again finds them."""

    def __init__(self, *, registry: SessionRegistry, tasks: BackgroundTasks | None = None) -> None:
        self._registry = registry
        self._tasks = tasks

    async def execute(self, session_id: str) -> None:
        await self._registry.close(session_id)
        if self._tasks is not None:
            await self._tasks.end_session(session_id)
