"""Requests answered while the agent still loads (its imports take a few hundred ms after
`initialize`): `session/list` reads the store with the standard library (SQLite) or asyncpg
alone (PostgreSQL). Everything is imported on first use, so none of it delays `initialize`.

On PostgreSQL the first read's connection is opened at start, as soon as asyncpg has loaded
(imported on a worker thread, which then imports the rest of what these answers use while
it opens): a client that lists on connecting, as editors do, then waits for one round trip
instead of the five of a new connection's and its query's. The agent's own imports wait for
that opening, briefly (`Early.settled`, bootstrap/heavy_imports.py)."""

import asyncio
import importlib
import logging
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adapters.protocol.connection import Connection
from adapters.protocol.lazy import EarlyAnswer
from bootstrap.heavy_imports import import_early_modules

if TYPE_CHECKING:  # loaded with the store's readers, not before `initialize`
    from adapters.persistence.early_postgres_opening import EarlyConnections
    from application.ports.session_listing import SessionListing
    from bootstrap.settings import Settings
    from domain.session import Session

log = logging.getLogger(__name__)

# asyncpg, and the connections it opens: nothing of the application.
_OPENING = "adapters.persistence.early_postgres_opening"
# How long a connection opened ahead waits for the first list before it is closed: the
# agent itself answers once it has loaded, a few hundred ms after start when idle.
SPARE_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class Early:
    """The early answers by method, and `settled`: set once the connection opened ahead
    is open or has failed, or at once where none is opened (SQLite, no running loop)."""

    answers: dict[str, EarlyAnswer]
    settled: threading.Event


def early_answers(database_url: str) -> Early:
    """The early answers; on PostgreSQL, also starts opening the first one's connection."""
    reads = _EarlyReads(database_url)
    if database_url.startswith("postgresql"):
        reads.start_connecting()
    else:
        reads.settled.set()

    async def session_list(params: dict[str, Any] | None, peer: Connection) -> Any | None:
        return await reads.session_list(params)

    # `sessions/list` is the agent's alias of `session/list` (adapters/acp_v1/agent.py).
    return Early({"session/list": session_list, "sessions/list": session_list}, reads.settled)


def early_new_session(settings: "Settings") -> dict[str, EarlyAnswer]:
    """`session/new` on a SQLite file, with a provider that has its key (else the agent
    answers, e.g. that a sign-in is needed): the first thing every editor asks for."""
    if not settings.database_url.startswith("sqlite") or not _signed_in(settings):
        return {}
    if settings.isolation == "worktree":  # a worktree is the agent's to make
        return {}
    made: EarlyAnswer | None = None

    async def session_new(params: dict[str, Any] | None, peer: Connection) -> Any | None:
        nonlocal made
        if made is None:  # imported on first use: none of it delays `initialize`
            made = _early_new(settings)
        return await made(params, peer)

    return {"session/new": session_new}


def _signed_in(settings: "Settings") -> bool:
    from bootstrap.offered_models import selected_endpoint

    return selected_endpoint(settings).usable


def _early_new(settings: "Settings") -> EarlyAnswer:
    from adapters.acp_v1.early_new import EarlyNewSession
    from adapters.clock import SystemClock
    from adapters.ids import UuidIds
    from adapters.persistence.early_reads import NotReadableEarly, database_file
    from adapters.persistence.early_writes import EarlySessionWriter
    from bootstrap.offered_models import build_catalog

    database = database_file(settings.database_url)  # None: a URL only the agent opens
    writer = None if database is None else EarlySessionWriter(database)

    def store(session: "Session") -> bool:
        if writer is None:
            return False
        try:
            writer.add(session)
        except NotReadableEarly as exc:
            log.debug("session/new left to the agent: %s", exc)
            return False
        return True

    return EarlyNewSession(
        store=store,
        catalog=build_catalog(settings),
        default_model=settings.default_model,
        ids=UuidIds(),
        clock=SystemClock(),
    )


def early_pages(
    database_url: str, connections: "EarlyConnections | None" = None
) -> "SessionListing | None":
    """The early reader for the store at `database_url`; None where only the agent reads.
    `connections`: PostgreSQL's, where one is being opened ahead already."""
    from adapters.persistence.early_reads import EarlySessionPages, database_file

    database = database_file(database_url)
    if database is not None:
        return EarlySessionPages(database)
    if database_url.startswith("postgresql"):
        from adapters.persistence.early_postgres import EarlyPostgresPages
        from adapters.persistence.early_postgres_opening import postgres_dsn

        dsn = postgres_dsn(database_url)
        return None if dsn is None else EarlyPostgresPages(dsn, connections)
    return None


class _EarlyReads:
    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._pages: SessionListing | None = None
        self._made = False
        self._connecting: asyncio.Task[None] | None = None  # held: a task is weakly kept
        self._connections: EarlyConnections | None = None
        self.settled = threading.Event()

    def start_connecting(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no running loop: nothing to open ahead
            self.settled.set()
            return
        self._connecting = loop.create_task(self.connect_ahead())
        self._connecting.add_done_callback(_told)

    def pages(self) -> "SessionListing | None":
        if not self._made:
            self._pages, self._made = early_pages(self._url, self._connections), True
        return self._pages

    async def connect_ahead(self) -> None:
        """asyncpg imported off the event loop's thread; the connection's opening started;
        then, while it opens (mostly waiting for the server), the rest of the answers'
        modules imported on that thread too (the agent's loader waits meanwhile: one thread
        imports them, not two at once). `settled` once it is open or has failed."""
        try:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, importlib.import_module, _OPENING)
            opening = self._open_ahead()
            await loop.run_in_executor(None, import_early_modules, self._url)
            if opening is not None:
                # Its failure is the read's to meet (it opens its own): not raised here.
                await asyncio.wait([opening])
        finally:
            self.settled.set()

    def _open_ahead(self) -> "asyncio.Future[Any] | None":
        from adapters.persistence.early_postgres_opening import EarlyConnections, postgres_dsn

        dsn = postgres_dsn(self._url)
        if dsn is None:  # a URL only the agent reads
            return None
        self._connections = EarlyConnections(dsn)
        return self._connections.open_ahead(keep=SPARE_SECONDS)

    async def session_list(self, params: dict[str, Any] | None) -> Any | None:
        if self._connecting is not None:
            # Its imports, then its connection, not a second one of our own; awaited, not
            # met as a held import lock that stops the event loop.
            await asyncio.wait([self._connecting])
        from adapters.acp_v1.listing import plain_list_params, plain_list_result
        from adapters.persistence.early_reads import NotReadableEarly
        from adapters.workspace.worktrees import worktree_at
        from application.errors import ApplicationError
        from application.sessions.listing import read_page

        request = plain_list_params(params)
        pages = self.pages()
        if request is None or pages is None:
            return None
        try:
            page = await read_page(pages, *request, worktree_of=worktree_at)
        except (NotReadableEarly, ApplicationError, sqlite3.Error, ValueError) as exc:
            log.debug("session/list left to the agent: %s", exc)
            return None  # the agent answers, and says what is wrong if anything is
        return plain_list_result(page)


def _told(connecting: "asyncio.Task[None]") -> None:
    """A failed import here is the agent's to report (it imports the same modules)."""
    if not connecting.cancelled() and connecting.exception() is not None:
        log.debug("nothing opened ahead: %s", connecting.exception())
