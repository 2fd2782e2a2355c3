"""A server on a new SQLite database creates its schema and runs a whole prompt turn (the
journal's and the store's upserts included) without loading alembic (and the mako and
pygments it brings) or PostgreSQL's dialect: memory and start-up time no SQLite user needs
(issue 34)."""

import json
import os
from pathlib import Path

import pytest

from tests.support.fresh_interpreter import run_python

pytestmark = pytest.mark.integration

SCRIPT = """
import asyncio, json, sys
from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.connection import Connection
from bootstrap.container import Container, release
from bootstrap.environment import environment
from bootstrap.settings import load_settings

async def main():
    settings = load_settings(environment())
    assert upgrade_to_head(settings.database_url) is True  # a new database: created
    container = Container(settings=settings, version="test")
    answers = {}
    async def send(message):
        if "id" in message and "method" not in message:
            answers[message["id"]].set_result(message)
    connection = Connection(send, container.agent())
    async def call(request_id, method, params):
        answers[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await connection.receive(json.dumps(message))
        return await asyncio.wait_for(answers[request_id], 30)
    new = await call(1, "session/new", {"cwd": sys.argv[1], "mcpServers": []})
    sid = new["result"]["sessionId"]
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "list files"}]}
    answer = await call(2, "session/prompt", prompt)
    assert answer["result"]["stopReason"] == "end_turn", answer
    listed = await call(3, "session/list", {"cwd": sys.argv[1]})
    assert [s["sessionId"] for s in listed["result"]["sessions"]] == [sid], listed
    await connection.close()
    await release(container)

asyncio.run(main())
unneeded = ("alembic", "mako", "pygments", "sqlalchemy.dialects.postgresql", "asyncpg")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(unneeded))))
"""


def test_a_sqlite_server_loads_neither_alembic_nor_postgresql(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    env = {
        **os.environ,
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
    }
    env.pop("IAC_CODE_DATABASE_URL", None)
    done = run_python(SCRIPT, str(cwd), env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "config" / "iac-code.db").exists()
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
