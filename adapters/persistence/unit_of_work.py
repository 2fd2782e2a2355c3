from contextlib import AbstractContextManager
from typing import Self

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.persistence.activity import SqlAlchemyActivityLog
from adapters.persistence.checkpoints import SqlAlchemyCheckpointStore
from adapters.persistence.failures import is_database_failure, storage_error
from adapters.persistence.lineage import Lineages
from adapters.persistence.listing import SqlAlchemySessionListing
from adapters.persistence.project_rules import SqlAlchemyProjectRuleRepository
from adapters.persistence.session_store import SqlAlchemySessionStore
from application.ports.tracing import NO_TRACING, Span, Tracer
from application.ports.unit_of_work import UnitOfWork


class SqlAlchemyUnitOfWork(UnitOfWork):
    """A fresh AsyncSession per `async with`; rolled back unless committed. Sessions saved
    in a unit of work that is not committed get their changes recorded again."""

    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        read_factory: async_sessionmaker[AsyncSession] | None = None,
        tracer: Tracer = NO_TRACING,
        *,
        read_only: bool = False,
    ) -> None:
        self._session_factory = session_factory
        self._read_factory = read_factory
        self._tracer = tracer
        bind = session_factory.kw.get("bind")
        self._span_attributes = {
            "db.system.name": bind.dialect.name if bind is not None else "unknown",
            "iac_code.storage.read_only": read_only,
        }

    def reading(self) -> "SqlAlchemyUnitOfWork":
        if self._read_factory is None:
            return self
        return SqlAlchemyUnitOfWork(self._read_factory, tracer=self._tracer, read_only=True)

    def _start_span(self) -> None:
        """One span per transaction, open from `async with` to its end: a child of the
        span current then (the turn's, a tool call's, a request's)."""
        self._span_context: AbstractContextManager[Span] = self._tracer.span(
            "storage transaction", self._span_attributes
        )
        self._span = self._span_context.__enter__()

    async def __aenter__(self) -> Self:
        self._db = self._session_factory()
        lineages = Lineages(self._db)
        self.sessions = self._store = SqlAlchemySessionStore(self._db, lineages)
        self.activity = SqlAlchemyActivityLog(self._db, lineages)
        self.listing = SqlAlchemySessionListing(self._db)
        self.rules = SqlAlchemyProjectRuleRepository(self._db)
        self.checkpoints = SqlAlchemyCheckpointStore(self._db)
        self._start_span()  # last: nothing after it may fail and leave the span open
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self._end(*exc_info)
        except BaseException as error:
            self._span_context.__exit__(type(error), error, error.__traceback__)
            raise
        self._span_context.__exit__(*exc_info)  # type: ignore[arg-type]

    async def _end(self, *exc_info: object) -> None:
        failed = exc_info[1] if len(exc_info) > 1 else None
        try:
            try:
                await self._db.rollback()
            finally:
                await self._db.close()
                for session, taken in reversed(self._store.saved):
                    session.restore_changes(taken)
                self._store.saved.clear()
        except Exception as ending:  # the database went away, say: told unless already failing
            if failed is None and is_database_failure(ending):
                raise storage_error(ending) from ending
            if failed is None:
                raise
        if isinstance(failed, BaseException) and is_database_failure(failed):
            raise storage_error(failed) from failed  # reads too: a clear error, not an internal one

    async def commit(self) -> None:
        try:
            await self._db.commit()
        except SQLAlchemyError as exc:
            raise storage_error(exc, "Storing the session failed.") from exc
        self._store.saved.clear()
        self._span.set("iac_code.storage.committed", True)
