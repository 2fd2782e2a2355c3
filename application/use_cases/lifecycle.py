from application.runtime import SessionRegistry
from application.use_cases.turn_lease import TurnLeasing
from domain.ids import SessionId


class CancelTurn:
    """Ask the running turn of a session to stop. Unknown or idle sessions: nothing happens."""

    def __init__(self, *, registry: SessionRegistry, leasing: TurnLeasing | None = None) -> None:
        self._registry = registry
        self._leasing = leasing

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
    """Drop a session from memory, cancelling its running turn. History stays. Idempotent."""

    def __init__(self, *, registry: SessionRegistry) -> None:
        self._registry = registry

    async def execute(self, session_id: str) -> None:
        await self._registry.close(session_id)
