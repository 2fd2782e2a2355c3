"""One short transaction per call, for the stores that work on connections rather than
on the unit of work's session (the journal, the HTTP connection records, the leases)."""

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from adapters.persistence.failures import Contended, storage_error

log = logging.getLogger(__name__)

T = TypeVar("T")

# How long work that only contention keeps from the database is tried again, in all.
CONTENTION_PATIENCE = 30.0


class Transactions:
    """`_transaction()` begins on the writer, `_transaction(reading=True)` on the reader,
    and turns a database failure into the StorageError that names `what` failed.
    Exceptions in `passed_through` reach the caller as they are: a store that reads one
    as an answer (a lease's IntegrityError: "held elsewhere") catches it itself."""

    passed_through: tuple[type[BaseException], ...] = ()

    def __init__(
        self,
        engine: AsyncEngine,
        reader: AsyncEngine | None,
        what: str,
        *,
        database_clock: bool = False,
        patience: float = CONTENTION_PATIENCE,
    ) -> None:
        self._patience = patience
        self._engine = engine
        self._reader = reader or engine  # reads take no write lock (SQLite)
        self._what = what
        # Replicas on several machines: each one's own clock would let one running ahead
        # take live leases, so moments are the database's (the caller's lengths kept).
        self._database_clock = database_clock

    async def _moment(self, db: AsyncConnection, now: datetime) -> datetime:
        """`now` as the database's clock tells it, if moments go by the database's clock."""
        if not self._database_clock:
            return now
        moment: datetime = (await db.execute(select(func.now()))).scalar_one()
        return moment

    @asynccontextmanager
    async def _transaction(self, *, reading: bool = False) -> AsyncIterator[AsyncConnection]:
        try:
            async with (self._reader if reading else self._engine).begin() as connection:
                yield connection
        except self.passed_through:
            raise
        except (SQLAlchemyError, OSError) as exc:  # OSError: a connection refused, unwrapped
            raise storage_error(exc, f"The {self._what} could not be read or written.") from exc

    async def _patiently(self, work: Callable[[], Awaitable[T]]) -> T:
        """`work` (one transaction of its own), tried again while only other writers keep
        it from the database (SQLite's lock held past its busy timeout, a PostgreSQL
        serialization failure): a busy but healthy database delays the caller instead of
        failing it. Past the store's patience, or on any other failure, a StorageError."""
        loop = asyncio.get_running_loop()
        give_up, pause = loop.time() + self._patience, 0.05
        while True:
            try:
                return await work()
            except Contended:
                if loop.time() + pause > give_up:
                    raise
                log.info("the %s waits for a busy database", self._what)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)
