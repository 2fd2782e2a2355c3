"""Give a stored session another title."""

from application.history.saving import save_setting
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import SessionRegistry
from application.sessions.load_session import StoredSessions
from domain.events import SessionTitleChanged


class RenameSession:
    """Replace a session's title (open or only stored); an open session's client is told."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        stored: StoredSessions,
        registry: SessionRegistry,
        sink: EventSink,
        clock: Clock,
    ) -> None:
        self._uow = uow
        self._stored = stored
        self._registry = registry
        self._sink = sink
        self._clock = clock

    async def execute(self, session_id: str, title: str) -> str:
        active = self._registry.find(session_id)
        session = active.session if active else await self._stored.fetch(session_id)
        new_title = await save_setting(
            self._uow, session, lambda s: s.rename(title, at=self._clock.now())
        )
        if active is not None:
            await self._sink.emit(session.id, SessionTitleChanged(title=new_title))
        return new_title
