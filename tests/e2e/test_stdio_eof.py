"""At stdin's EOF every request read is answered before the process exits (issue 25,
finding 6): a prompt waiting for a permission answers `cancelled`; a `session/new` held up
by the database (its first connection, for the start-up migration, waits) gets its real
answer once the database answers, however long after the EOF that is (within the bound)."""

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from tests.e2e.conftest import IAC_CODE
from tests.e2e.test_stdio_raw import RawAgent
from tests.support import children
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.e2e

BACKSTOP = 60.0


@asynccontextmanager
async def _agent(tmp_path: Path, workdir: Path, **env: str) -> AsyncIterator[tuple[RawAgent, Path]]:
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as log:
        process = await children.start_async(
            [IAC_CODE, "acp"],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            cwd=workdir,
            env={
                "IAC_CODE_CONFIG_DIR": str(tmp_path / "cfg"),
                "IAC_CODE_PROVIDER": "demo",
                "IAC_CODE_DEMO_PACE": "0",
                "IAC_CODE_LOG_LEVEL": "INFO",
                "PATH": "/usr/bin:/bin",
                **env,
            },
        )
        try:
            yield RawAgent(process), stderr
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _rest(raw: RawAgent) -> list[dict[str, Any]]:
    """Every message until stdout closes."""
    messages = []
    while line := await asyncio.wait_for(raw.process.stdout.readline(), BACKSTOP):
        messages.append(json.loads(line))
    return messages


def _read(path: Path) -> str:
    return path.read_text(errors="replace")


async def _logged(stderr: Path, text: str) -> None:
    """Polls the server's log (the process offers no event for it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BACKSTOP
    while text not in (said := await asyncio.to_thread(_read, stderr)):
        assert loop.time() < deadline, said
        await asyncio.sleep(0.05)


async def test_finding_6_a_prompt_waiting_for_permission_at_eof_answers_cancelled(
    tmp_path: Path, workdir: Path
) -> None:
    async with _agent(tmp_path, workdir) as (raw, _):
        await raw.initialize()
        new = await raw.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        await raw.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "run ls"}]},
            }
        )
        while (await raw.recv(BACKSTOP)).get("method") != "session/request_permission":
            pass
        raw.process.stdin.close()  # never answered: the client is gone, but still reads
        answers = [m for m in await _rest(raw) if m.get("id") == 2 and "method" not in m]
        assert [a["result"]["stopReason"] for a in answers] == ["cancelled"], answers
        assert await asyncio.wait_for(raw.process.wait(), BACKSTOP) == 0


@asynccontextmanager
async def _held_database(to_host: str, to_port: int) -> AsyncIterator[tuple[int, asyncio.Event]]:
    """A port that accepts connections and leads to the database only once released."""
    released = asyncio.Event()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await released.wait()
        upstream_reader, upstream_writer = await asyncio.open_connection(to_host, to_port)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1], released


@pytest.fixture
def database() -> Iterator[str]:
    with scratch_database("eof") as url:
        yield url


async def test_finding_6_a_session_new_still_running_at_eof_gets_its_answer(
    tmp_path: Path, workdir: Path, database: str
) -> None:
    real = make_url(database)
    async with _held_database(real.host or "127.0.0.1", real.port or 5432) as (port, released):
        held = real.set(port=port).render_as_string(hide_password=False)
        async with _agent(tmp_path, workdir, IAC_CODE_DATABASE_URL=held) as (raw, stderr):
            await raw.initialize()  # answered early: the agent still waits for its database
            await raw.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": str(workdir), "mcpServers": []},
                }
            )
            raw.process.stdin.close()
            # Past the EOF, the server waits for the request (it says so), and only then
            # does the database answer: the session/new is served after the EOF.
            await _logged(stderr, "answering 1 request(s) still running")
            released.set()
            answers = [m for m in await _rest(raw) if m.get("id") == 1]
            assert len(answers) == 1 and "sessionId" in answers[0]["result"], answers
            assert await asyncio.wait_for(raw.process.wait(), BACKSTOP) == 0
