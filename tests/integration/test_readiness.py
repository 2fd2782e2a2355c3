"""/readyz's database check: the database answers AND holds the newest schema, on both."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command

from adapters.persistence.migrate import alembic_config, upgrade_to_head
from adapters.persistence.readiness import at_schema_head
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'ready.db'}"
        return
    with scratch_database("ready") as url:
        yield url


async def test_ready_only_when_reachable_and_at_the_newest_schema(empty_database: str) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - no schema: any failure answers 503
        await at_schema_head(empty_database)
    command.upgrade(alembic_config(empty_database), "0006")
    assert await at_schema_head(empty_database) is False  # an older schema: not ready
    upgrade_to_head(empty_database)
    assert await at_schema_head(empty_database) is True
