from application.runtime import SessionRegistry


class CancelTurn:
    """Ask the running turn of a session to stop. Unknown or idle sessions: nothing happens."""

    def __init__(self, *, registry: SessionRegistry) -> None:
        self._registry = registry

    def execute(self, session_id: str) -> None:
        active = self._registry.find(session_id)
        if active is not None:
            active.cancel()


class CloseSession:
    """Drop a session from memory, cancelling its running turn. History stays. Idempotent."""

    def __init__(self, *, registry: SessionRegistry) -> None:
        self._registry = registry

    async def execute(self, session_id: str) -> None:
        await self._registry.close(session_id)
