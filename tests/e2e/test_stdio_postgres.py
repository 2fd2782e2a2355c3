"""Two `iac-code acp` processes on one PostgreSQL database, as two replicas: what one
stores, the other lists and loads; and the sessions CLI on that database."""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import DEMO, IAC_CODE, Spawn
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.e2e


@pytest.fixture
def on_postgres() -> Iterator[dict[str, str]]:
    with scratch_database("stdio") as url:  # new and empty: the first process migrates it
        yield {**DEMO, "IAC_CODE_DATABASE_URL": url}


async def test_a_session_stored_by_one_process_is_listed_and_loaded_by_another(
    spawn: Spawn, workdir: Path, on_postgres: dict[str, str], base_env: dict[str, str]
) -> None:
    async with spawn(on_postgres) as first, spawn(on_postgres) as second:
        await first.initialize()
        await second.initialize()
        session = await first.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await first.conn.prompt(
            session_id=session.session_id, prompt=[text_block("Hello from the first")]
        )
        assert result.stop_reason == "end_turn"

        listed = await second.conn.list_sessions(cwd=str(workdir))
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        assert listed.sessions[0].title == "Hello from the first"
        await second.conn.load_session(
            cwd=str(workdir), session_id=session.session_id, mcp_servers=[]
        )
        replayed = [u for sid, u in second.client.updates if sid == session.session_id]
        said = [u.content.text for u in replayed if u.session_update == "user_message_chunk"]
        assert said == ["Hello from the first"]
        assert "You said: Hello from the first" in second.client.agent_text()
    assert "postgresql+asyncpg" in first.stderr()  # the start line names the database

    # The sessions CLI on the same database: list, rename, show.
    env = {**os.environ, **base_env, **on_postgres}
    cli = [IAC_CODE, "sessions"]
    listed_out = _run([*cli, "list"], env)
    assert session.session_id in listed_out and "Hello from the first" in listed_out
    assert session.session_id in _run([*cli, "rename", session.session_id, "Renamed"], env)
    assert "Renamed" in _run([*cli, "show", session.session_id], env)


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout
