"""Requests answered while the agent still loads (its imports take a few hundred ms after
`initialize`): `session/list` reads the store with the standard library (SQLite) or asyncpg
alone (PostgreSQL). Everything is imported on first use, so none of it delays `initialize`.

On PostgreSQL the first read's connection is opened at start, as soon as asyncpg has loaded
(imported on a worker thread): a client that lists on connecting, as editors do, then waits
for one round trip instead of the five of a new connection's and its query's."""

import asyncio
import contextlib
import importlib
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.protocol.connection import Connection
from adapters.protocol.lazy import EarlyAnswer

if TYPE_CHECKING:  # loaded with the store's readers, not before `initialize`
    from application.ports.session_store import SessionListing
    from bootstrap.settings import Settings
    from domain.session import Session

log = logging.getLogger(__name__)

# How long a connection opened ahead waits for the first list before it is closed: the
# agent itself answers once it has loaded, a few hundred ms after start when idle.
SPARE_SECONDS = 20.0


def early_answers(database_url: str) -> dict[str, EarlyAnswer]:
    """The early answers; on PostgreSQL, also starts opening the first one's connection."""
    reads = _EarlyReads(database_url)
    if database_url.startswith("postgresql"):
        reads.start_connecting()

    async def session_list(params: dict[str, Any] | None, peer: Connection) -> Any | None:
        return await reads.session_list(params)

    # `sessions/list` is the agent's alias of `session/list` (adapters/protocol/agent.py).
    return {"session/list": session_list, "sessions/list": session_list}


def early_new_session(settings: "Settings") -> dict[str, EarlyAnswer]:
    """`session/new` on a SQLite file, with a provider that has its key (else the agent
    answers, e.g. that a sign-in is needed): the first thing every editor asks for."""
    from adapters.persistence.early_reads import database_file

    database = database_file(settings.database_url)
    if database is None or not _signed_in(settings):
        return {}
    made: EarlyAnswer | None = None

    async def session_new(params: dict[str, Any] | None, peer: Connection) -> Any | None:
        nonlocal made
        if made is None:  # imported on first use: none of it delays `initialize`
            made = _early_new(settings, database)
        return await made(params, peer)

    return {"session/new": session_new}


def _signed_in(settings: "Settings") -> bool:
    from bootstrap.offered_models import selected_endpoint

    return selected_endpoint(settings).usable


def _early_new(settings: "Settings", database: Path) -> EarlyAnswer:
    from adapters.clock import SystemClock
    from adapters.ids import UuidIds
    from adapters.persistence.early_reads import NotReadableEarly
    from adapters.persistence.early_writes import EarlySessionWriter
    from adapters.protocol.early_new import EarlyNewSession
    from bootstrap.offered_models import build_catalog

    writer = EarlySessionWriter(database)

    def store(session: "Session") -> bool:
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


def early_pages(database_url: str) -> "SessionListing | None":
    """The early reader for the store at `database_url`; None where only the agent reads."""
    from adapters.persistence.early_reads import EarlySessionPages, database_file

    database = database_file(database_url)
    if database is not None:
        return EarlySessionPages(database)
    if database_url.startswith("postgresql"):
        from adapters.persistence.early_postgres import EarlyPostgresPages, postgres_dsn

        dsn = postgres_dsn(database_url)
        return None if dsn is None else EarlyPostgresPages(dsn)
    return None


class _EarlyReads:
    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._pages: SessionListing | None = None
        self._made = False
        self._connecting: asyncio.Task[None] | None = None  # held: a task is weakly kept

    def start_connecting(self) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to open ahead
            self._connecting = asyncio.get_running_loop().create_task(self.connect_ahead())

    def pages(self) -> "SessionListing | None":
        if not self._made:
            self._pages, self._made = early_pages(self._url), True
        return self._pages

    async def connect_ahead(self) -> None:
        """asyncpg imported off the event loop's thread, then the connection opened."""
        loop = asyncio.get_running_loop()
        name = "adapters.persistence.early_postgres"
        await loop.run_in_executor(None, importlib.import_module, name)
        from adapters.persistence.early_postgres import EarlyPostgresPages

        pages = self.pages()
        if isinstance(pages, EarlyPostgresPages):
            pages.connect_ahead(keep=SPARE_SECONDS)

    async def session_list(self, params: dict[str, Any] | None) -> Any | None:
        from adapters.persistence.early_reads import NotReadableEarly
        from adapters.protocol.listing import plain_list_params, plain_list_result
        from application.errors import ApplicationError
        from application.use_cases.listing import read_page

        request = plain_list_params(params)
        pages = self.pages()
        if request is None or pages is None:
            return None
        try:
            page = await read_page(pages, *request)
        except (NotReadableEarly, ApplicationError, sqlite3.Error, ValueError) as exc:
            log.debug("session/list left to the agent: %s", exc)
            return None  # the agent answers, and says what is wrong if anything is
        return plain_list_result(page)
