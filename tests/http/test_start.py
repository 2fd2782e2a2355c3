"""`iac-code acp --transport http` listens before the agent has loaded: `/readyz` says
ready only once it has, and a server whose agent cannot start exits."""

import asyncio
import os
import subprocess
from pathlib import Path
from typing import cast

import pytest

from adapters.protocol.connection import Dispatcher
from bootstrap.http import agent_ready
from tests.e2e.conftest import IAC_CODE
from tests.http.walkthrough import free_port


async def database_ok() -> bool:
    return True


async def database_missing() -> bool:
    return False


async def test_not_ready_while_the_agent_loads() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent_ready(agent, database_ok)(), 0.05)
    assert not agent.done()  # the probe's timeout does not cancel the start


async def test_ready_once_the_agent_loaded_and_the_database_is() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    probe = asyncio.ensure_future(agent_ready(agent, database_ok)())
    await asyncio.sleep(0)
    assert not probe.done()
    agent.set_result(cast(Dispatcher, object()))
    assert await probe is True
    assert await agent_ready(agent, database_missing)() is False


async def test_never_ready_when_the_agent_failed() -> None:
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    agent.set_exception(RuntimeError("no database"))
    with pytest.raises(RuntimeError):
        await agent_ready(agent, database_ok)()


@pytest.mark.e2e
def test_the_server_exits_when_its_agent_cannot_start(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(tmp_path),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DATABASE_URL": f"sqlite+aiosqlite:///{blocker}/sessions.db",
    }
    argv = [IAC_CODE, "acp", "--transport", "http", "--port", str(free_port())]
    result = subprocess.run(argv, env=env, capture_output=True, timeout=60, check=False)
    assert result.returncode != 0
    assert b"the agent failed to start" in result.stderr
