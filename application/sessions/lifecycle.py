from application.runtime.registry import SessionRegistry
from application.runtime.subagent_runs import SubagentRuns
from application.sessions.turn_lease import TurnLeasing
from application.tasks.background_tasks import BackgroundTasks
from domain.ids import SessionId


class CancelTurn:
    """Ask the running turn of a session to stop. Unknown or idle sessions: nothing happens.
    A running sub-agent's child session is cancelled alone (`child`); its parent goes on."""

    def __init__(
        self,
        *,
        registry: SessionRegistry,
        leasing: TurnLeasing,
        children: SubagentRuns,
    ) -> None:
        self._registry = registry
        self._leasing = leasing
        self._children = children

    def parent_of(self, session_id: str) -> SessionId | None:
        """The parent of a child session running here (None: not one); whoever may
        cancel the parent may cancel it."""
        return self._children.parent_of(session_id)

    def child(self, session_id: str) -> bool:
        return self._children.cancel(session_id)

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
        if not self.execute(session_id):
            await self._leasing.request_cancel(SessionId(session_id))


class CloseSession:
    """`session/close` from a session's last client: drop it from memory, cancelling its
    running turn, and kill its background tasks. History stays. Idempotent.

    (The room closing a session its last client's connection left only drops it from
    memory, `SessionRegistry.close`: its tasks go on, and a client attaching again finds
    them.)"""

    def __init__(self, *, registry: SessionRegistry, tasks: BackgroundTasks) -> None:
        self._registry = registry
        self._tasks = tasks

    async def execute(self, session_id: str) -> None:
        await self._registry.close(session_id)
        await self._tasks.end_session(session_id)
