"""A database that refuses connections (issue 25, finding 8): `session/new` is answered as the
session store's error, saying why, the server keeps serving, and once the database answers
again the next request works."""

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.e2e.test_stdio_raw import raw_agent
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def _forwarding(port: int, to_host: str, to_port: int) -> AsyncIterator[None]:
    """The database comes back: `port` now leads to the real server."""

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
        upstream_reader, upstream_writer = await asyncio.open_connection(to_host, to_port)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        yield


@pytest.fixture
def database() -> Iterator[str]:
    with scratch_database("store_down") as url:
        yield url


async def test_finding_8_a_database_refusing_connections_is_the_session_stores_error(
    tmp_path: Path, workdir: Path, database: str
) -> None:
    real = make_url(database)
    port = _free_port()  # nothing listens there yet
    closed = real.set(port=port).render_as_string(hide_password=False)
    async with raw_agent(tmp_path, workdir, IAC_CODE_DATABASE_URL=closed) as raw:
        await raw.initialize()
        for id in (1, 2):  # each request tries the database again, and says why it failed
            reply = await raw.call(id, "session/new", {"cwd": str(workdir), "mcpServers": []})
            error = reply["error"]
            assert error["code"] == -32603, reply
            assert "session store" in error["message"]
            assert error["data"] == {"reason": "the database is unreachable"}
            assert "postgres@" not in error["message"] and "127.0.0.1" not in error["message"]
        await raw.initialize()  # still serving

        async with _forwarding(port, real.host or "127.0.0.1", real.port or 5432):
            reply = await raw.call(3, "session/new", {"cwd": str(workdir), "mcpServers": []})
            assert "sessionId" in reply["result"], reply
            listed = await raw.call(4, "session/list", {})
            assert [s["sessionId"] for s in listed["result"]["sessions"]] == [
                reply["result"]["sessionId"]
            ]
            raw.process.stdin.close()
            assert await asyncio.wait_for(raw.process.wait(), 30) == 0
