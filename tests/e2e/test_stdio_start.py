"""A fresh process lists the store before its agent has loaded (SQLite with the standard
library, PostgreSQL with asyncpg alone): the same answer, and cursors that work, as once it
has. And it answers `initialize` without importing any of the agent's heavy modules."""

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_stdio_raw import RawAgent, raw_agent
from tests.support.patience import PATIENCE
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


# The real stdio server, its agent's loading held back until the test says so: the worker
# thread then first writes down every module imported by then, all of it the main thread's
# doing (imports needed to answer `initialize`), and loads the agent as always.
HELD_BACK_SERVER = """
import os, sys
import bootstrap.stdio as stdio

build = stdio._build_agent

def held_back(*args):
    os.read(int(os.environ["TEST_RELEASE_FD"]), 1)
    path = os.environ["TEST_MODULES_FILE"]
    with open(path + ".part", "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
    os.replace(path + ".part", path)  # whole, or not there yet
    return build(*args)

stdio._build_agent = held_back
from bootstrap.cli import main
sys.exit(main(["acp"]))
"""

# Loaded for sessions, the store, the model or configuration files: never for `initialize`.
NOT_FOR_INITIALIZE = (
    "acp",  # the ACP SDK's pydantic models
    "pydantic",
    "pydantic_core",
    "dependency_injector",
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "alembic",
    "anthropic",
    "openai",
    "httpx",
    "mcp",
    "opentelemetry",  # tracing is off
    "yaml",  # agent and skill files
    "tomllib",  # no config.toml here
    "importlib.metadata",  # the version is read from the dist-info directly
    "email",
    "zipfile",
    "secrets",
    "urllib.request",
    "html",
    "zoneinfo",
    "decimal",
    "bootstrap.container",
    "application.dto",
    "application.ports.session_store",
    "domain.events",
    "domain.session",
)


async def test_initialize_is_answered_without_the_agents_modules(
    tmp_path: Path, workdir: Path
) -> None:
    modules_file = tmp_path / "modules"
    release, released = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            HELD_BACK_SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=workdir,
            pass_fds=(release,),
            env={
                "IAC_CODE_CONFIG_DIR": str(tmp_path / "cfg"),
                "IAC_CODE_PROVIDER": "demo",
                "PATH": "/usr/bin:/bin",
                "TEST_RELEASE_FD": str(release),
                "TEST_MODULES_FILE": str(modules_file),
            },
        )
        agent = RawAgent(process)
        await agent.initialize()
        assert not modules_file.exists()  # the agent waited
        os.write(released, b"go")
        # What initialize loaded is taken before session/new is sent: answered early on
        # the main thread, it may load the session store's modules meanwhile.
        deadline = asyncio.get_running_loop().time() + PATIENCE
        while not modules_file.exists():
            assert asyncio.get_running_loop().time() < deadline, "the agent was not released"
            await asyncio.sleep(0.01)
        created = await agent.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        assert "sessionId" in created["result"], created
        process.stdin.close()
        await asyncio.wait_for(process.wait(), PATIENCE)
    finally:
        os.close(release)
        os.close(released)
    loaded = set(modules_file.read_text().split())
    assert {"bootstrap.stdio", "adapters.acp_v1.handshake"} <= loaded  # what answered
    assert sorted(name for name in NOT_FOR_INITIALIZE if name in loaded) == []
