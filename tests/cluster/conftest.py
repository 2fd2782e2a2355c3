"""The cluster's fixtures: nginx (installed by scripts/ensure-nginx when missing; the tests are
skipped, saying why, only when that fails, and never in CI) and the replicas' shared database.
A failed cluster test's report ends with the tail of each replica's log."""

import importlib.util
import os
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cluster import ensure_nginx, postgres_database, sqlite_url

LOG_TAIL = 150  # lines of each replica's log in a failed test's report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The replicas' logs live in the test's tmp_path, which later runs delete: a failure
    that shows only under load can then be read from the report alone."""
    report = yield
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if report.failed and isinstance(tmp_path, Path):
        for log in sorted(tmp_path.glob("r*/stderr.log")):
            lines = log.read_text(errors="replace").splitlines()[-LOG_TAIL:]
            report.sections.append((f"replica {log.parent.name}: {log}", "\n".join(lines)))
    return report


@pytest.fixture(scope="session")
def nginx() -> str:
    found, why = ensure_nginx()
    if found is None:
        if os.environ.get("CI"):  # .ci/run installs nginx first: CI never skips these
            pytest.fail(f"the cluster tests need nginx: {why}", pytrace=False)
        pytest.skip(why)
    return found


def database_kind() -> str:
    """IAC_CODE_CLUSTER_DATABASE (sqlite or postgres) if set; else PostgreSQL when the tests
    have one (tests/support/postgres.py) and the product its driver, else one SQLite file."""
    chosen = os.environ.get("IAC_CODE_CLUSTER_DATABASE", "").strip()
    if chosen:
        assert chosen in ("sqlite", "postgres"), f"IAC_CODE_CLUSTER_DATABASE={chosen!r}"
        return chosen
    has_driver = importlib.util.find_spec("asyncpg") is not None
    if not has_driver:
        return "sqlite"
    from tests.support.postgres import configured_url  # imports the driver

    return "postgres" if configured_url() else "sqlite"


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """The one database every replica of a test's cluster shares, new for the test."""
    if database_kind() == "sqlite":
        yield sqlite_url(tmp_path)
        return
    from tests.support.postgres import configured_url, skip_reason

    admin_url = configured_url()
    assert admin_url, f"IAC_CODE_CLUSTER_DATABASE=postgres needs PostgreSQL: {skip_reason()}"
    with postgres_database(admin_url) as url:
        yield url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        yield client
