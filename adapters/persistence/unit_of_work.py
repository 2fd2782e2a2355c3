from typing import Self

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.persistence.project_rules import SqlAlchemyProjectRuleRepository
from adapters.persistence.repository import SqlAlchemySessionRepository
from application.errors import StorageError
from application.ports.unit_of_work import UnitOfWork


class SqlAlchemyUnitOfWork(UnitOfWork):
    """A fresh AsyncSession per `async with`; rolled back unless committed."""

    def __init__(self, session_factory: async_sessionmaker[AsyncSession]) -> None:
        self._session_factory = session_factory

    async def __aenter__(self) -> Self:
        self._db = self._session_factory()
        self.sessions = SqlAlchemySessionRepository(self._db)
        self.rules = SqlAlchemyProjectRuleRepository(self._db)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self._db.rollback()
        finally:
            await self._db.close()

    async def commit(self) -> None:
        try:
            await self._db.commit()
        except SQLAlchemyError as exc:
            raise StorageError("Storing the session failed.") from exc
