"""Resume, fork, rename and delete stored sessions (listing them: listing.py)."""

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.file_checkpoints import carry_checkpoints
from application.use_cases.load_session import StoredSessions
from application.use_cases.saving import save_setting
from application.use_cases.session_opening import OpenWith
from application.use_cases.session_state import state_of
from domain.config import Catalog
from domain.events import SessionTitleChanged


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


class ForkSession:
    """A new session with the same history and settings, independent from then on.

    The fork is opened; the source is left as it was (open or not). Cost does not depend
    on the history's length: the store shares the messages up to the fork point. The file
    checkpoints of the turns it holds are copied (a rewind of the fork restores files).
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        stored: StoredSessions,
        registry: SessionRegistry,
        ids: IdGenerator,
        clock: Clock,
        catalog: Catalog,
        open_with: OpenWith,
    ) -> None:
        self._uow = uow
        self._open_with = open_with
        self._stored = stored
        self._registry = registry
        self._ids = ids
        self._clock = clock
        self._catalog = catalog

    async def execute(
        self,
        session_id: str,
        cwd: str,
        opening: SessionOpening = NOTHING_MORE,
        *,
        at_message_id: str | None = None,
    ) -> SessionState:
        """`at_message_id`: the fork holds the history before that prompt of the user's
        (as a rewind to it would leave it); None: all of it."""
        active = self._registry.find(session_id)
        source = active.session if active else await self._stored.fetch(session_id)
        if source.cwd != cwd:
            await self._stored.open(session_id, cwd)  # raises the "lives elsewhere" error
        fork = source.fork(self._ids.session_id(), at=self._clock.now())
        if at_message_id is not None:
            fork.cut_at(source.prompt_position(at_message_id))
        await self._open_with.apply(fork, opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.fork(source, fork)
            await carry_checkpoints(uow.checkpoints, source.id, fork)
            await uow.commit()
        self._registry.open(fork).mcp_wanted = opening.mcp_servers
        return state_of(fork, self._catalog)


class DeleteSession:
    """Remove a session and its history; its running turn is cancelled. Unknown ids: no-op."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        clock: Clock,
        tasks: BackgroundTasks | None = None,
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._clock = clock
        self._tasks = tasks

    async def execute(self, session_id: str) -> bool:
        if self._tasks is not None:  # killed, and nothing more of them stored
            await self._tasks.end_session(session_id, record=False)
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
