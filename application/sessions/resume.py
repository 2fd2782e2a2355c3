"""Resume a stored session: reattach without replaying it."""

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.sessions.load_session import StoredSessions
from application.sessions.opening import OpenWith
from application.sessions.state import state_of
from domain.config import Catalog


class ResumeSession:
    """Reattach to a session without replaying it (loading it from storage if needed)."""

    def __init__(self, *, stored: StoredSessions, catalog: Catalog, open_with: OpenWith) -> None:
        self._stored = stored
        self._catalog = catalog
        self._open_with = open_with

    async def execute(
        self, session_id: str, cwd: str, opening: SessionOpening = NOTHING_MORE
    ) -> SessionState:
        session = await self._stored.open(session_id, cwd)
        await self._open_with.apply(session, opening, stored=True)
        return state_of(session, self._catalog)
