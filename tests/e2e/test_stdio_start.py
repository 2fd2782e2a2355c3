"""A fresh process lists the store before its agent has loaded (SQLite with the standard
library, PostgreSQL with asyncpg alone): the same answer, and cursors that work, as once it
has."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_stdio_raw import raw_agent
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The server's environment for its store: the default SQLite file, or a new database."""
    if request.param == "sqlite":
        yield {}
        return
    with scratch_database("start") as url:
        yield {"IAC_CODE_DATABASE_URL": url}


async def test_listing_right_after_start_is_the_agents_listing(
    tmp_path: Path, workdir: Path, store: dict[str, str]
) -> None:
    async with raw_agent(tmp_path, workdir, **store) as agent:
        await agent.initialize()
        for i in range(52):
            reply = await agent.call(i + 1, "session/new", {"cwd": str(workdir)})
            assert "result" in reply, reply
    async with raw_agent(tmp_path, workdir, **store) as agent:
        await agent.initialize()
        first = await agent.call(1, "session/list", {"cwd": str(workdir)})
        everything = await agent.call(2, "sessions/list")
        loaded = await agent.call(3, "no/such_method")  # answered by the loaded agent
        assert loaded["error"]["code"] == -32601
        again = await agent.call(4, "session/list", {"cwd": str(workdir)})
        rest = await agent.call(
            5, "session/list", {"cwd": str(workdir), "cursor": first["result"]["nextCursor"]}
        )
        refused = await agent.call(6, "session/list", {"cwd": "relative"})
    assert first == {**again, "id": 1}
    assert everything["result"]["sessions"] == first["result"]["sessions"]  # one cwd only
    assert len(first["result"]["sessions"]) == 50 and len(rest["result"]["sessions"]) == 2
    assert "nextCursor" not in rest["result"]
    assert refused["error"]["code"] == -32602
