from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.sqlite import make_sqlite_engine
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    upgrade_to_head(database_url)  # the production schema path: alembic, never create_all
    engine = make_sqlite_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def uow_factory(engine: AsyncEngine):  # type: ignore[no-untyped-def]
    factory = async_sessionmaker(engine, expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(factory)
