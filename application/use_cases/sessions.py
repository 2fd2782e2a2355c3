"""List, resume, fork and delete stored sessions."""

from dataclasses import dataclass

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.session_repository import SessionSummary
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from application.use_cases.cursor import decode_cursor, encode_cursor
from application.use_cases.load_session import StoredSessions
from application.use_cases.session_opening import OpenWith
from application.use_cases.session_state import state_of
from domain.config import Catalog
from domain.events import SessionTitleChanged

PAGE_SIZE = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    sessions: list[SessionSummary]
    next_cursor: str | None


class ListSessions:
    """Stored sessions, newest update first, 50 a page.

    - `cwd` filters by the exact path before paging; a cursor only works for its filter.
    - Raises InvalidCursor for a cursor this server did not give for that filter.
    """

    def __init__(self, *, uow: UnitOfWork, page_size: int = PAGE_SIZE) -> None:
        self._uow = uow
        self._page_size = page_size

    async def execute(self, cwd: str | None, cursor: str | None) -> SessionPage:
        after = decode_cursor(cwd, cursor) if cursor else None
        async with self._uow as uow:
            rows = await uow.sessions.list_page(cwd=cwd, after=after, limit=self._page_size + 1)
        page = rows[: self._page_size]
        more = len(rows) > self._page_size
        last = page[-1] if page else None
        next_cursor = (
            encode_cursor(cwd, last.updated_at, last.session_id) if more and last else None
        )
        return SessionPage(sessions=page, next_cursor=next_cursor)


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
    on the history's length: the store shares the messages up to the fork point.
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
        self, session_id: str, cwd: str, opening: SessionOpening = NOTHING_MORE
    ) -> SessionState:
        active = self._registry.find(session_id)
        source = active.session if active else await self._stored.fetch(session_id)
        if source.cwd != cwd:
            await self._stored.open(session_id, cwd)  # raises the "lives elsewhere" error
        fork = source.fork(self._ids.session_id(), at=self._clock.now())
        await self._open_with.apply(fork, opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.fork(source, fork)
            await uow.commit()
        self._registry.open(fork).mcp_wanted = opening.mcp_servers
        return state_of(fork, self._catalog)


class DeleteSession:
    """Remove a session and its history; its running turn is cancelled. Unknown ids: no-op."""

    def __init__(self, *, uow: UnitOfWork, registry: SessionRegistry, clock: Clock) -> None:
        self._uow = uow
        self._registry = registry
        self._clock = clock

    async def execute(self, session_id: str) -> bool:
        await self._registry.close(session_id)  # its last writes land before the delete
        async with self._uow as uow:
            deleted = await uow.sessions.delete(session_id, self._clock.now())  # type: ignore[arg-type]
            await uow.commit()
        return deleted


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
        new_title = session.rename(title, at=self._clock.now())
        async with self._uow as uow:
            await uow.sessions.save_settings(session)
            await uow.commit()
        if active is not None:
            await self._sink.emit(session.id, SessionTitleChanged(title=new_title))
        return new_title
