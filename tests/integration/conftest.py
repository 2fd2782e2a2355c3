"""The stores integration tests run on: each test that needs a database runs once per
backend, SQLite (a file in tmp_path) and PostgreSQL (this run's own database, migrated once,
emptied before each test). `@pytest.mark.backends(...)` narrows or widens the list
("memory": the in-memory fakes, for the contract tests)."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.engine import make_engine
from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from tests.support.postgres import empty_tables, scratch_database

DEFAULT_BACKENDS = ("sqlite", "postgres")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("backends")
        names = marker.args if marker else DEFAULT_BACKENDS
        metafunc.parametrize("backend", names, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_run_url() -> Iterator[str]:
    """This test run's PostgreSQL database, at the newest schema; dropped at the end."""
    with scratch_database() as url:
        upgrade_to_head(url)  # the production schema path (a new database: created at head)
        yield url


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "postgres":
        url: str = request.getfixturevalue("postgres_run_url")
        empty_tables(url)
        return url
    return f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    upgrade_to_head(database_url)  # the production schema path (a new database: created at head)
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def uow_factory(engine: AsyncEngine):  # type: ignore[no-untyped-def]
    factory = async_sessionmaker(engine, expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(factory)
