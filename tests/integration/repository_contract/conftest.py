"""The unit of work of each implementation under the contract: SQLite, PostgreSQL, in memory."""

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.integration.repository_contract.support import UowFactory


@pytest.fixture
def uow(backend: str, engine) -> UowFactory:  # type: ignore[no-untyped-def]
    if backend == "memory":
        shared = InMemorySessionRepository()
        return lambda: FakeUnitOfWork(shared)
    factory = async_sessionmaker(engine, expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(factory)
