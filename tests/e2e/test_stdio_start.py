"""A fresh process lists the store before its agent has loaded: the same answer, and
cursors that work, as once it has."""

from pathlib import Path

import pytest

from tests.e2e.test_stdio_raw import raw_agent

pytestmark = pytest.mark.e2e


async def test_listing_right_after_start_is_the_agents_listing(
    tmp_path: Path, workdir: Path
) -> None:
    async with raw_agent(tmp_path, workdir) as agent:
        await agent.initialize()
        for i in range(52):
            reply = await agent.call(i + 1, "session/new", {"cwd": str(workdir)})
            assert "result" in reply, reply
    async with raw_agent(tmp_path, workdir) as agent:
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
