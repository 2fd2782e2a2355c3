"""Finding 7 of issue #42: a client that resets its connection right after sending part of
a POST body made uvicorn log "Exception in ASGI application" (starlette's ClientDisconnect
through adapters/http/intake.py) and the access log a 500; and closing the connection of a
client that had reset it raised OSError from adapters/http/slow_clients.py. A client gone
mid-request is no error of the server's: an INFO line, a 499 in the access log, and the
server goes on serving."""

import asyncio
import json
import logging
import socket
import struct
from typing import Any

import httpx
import pytest

from adapters.http.slow_clients import LingeringClose
from tests.http.conftest import INITIALIZE, Serve
from tests.http.test_slow_clients import open_raw
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration


def access_entries(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        json.loads(r.getMessage())
        for r in caplog.records
        if r.name == "iac_code.http.access" and r.getMessage().startswith("{")
    ]


async def test_finding_7_a_client_resetting_mid_body_is_not_a_server_error(
    serve_fake: Serve, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with serve_fake() as base:
        reader, writer = await open_raw(base)
        # Expect: 100-continue makes the server say when the app starts reading the body:
        # the reset then comes with the request surely in the app's hands.
        writer.write(
            b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n"
        )
        await writer.drain()
        continue_line = await asyncio.wait_for(reader.readline(), PATIENCE)
        assert continue_line.startswith(b"HTTP/1.1 100"), continue_line
        writer.write(b'{"jsonrpc":')
        await writer.drain()
        raw: socket.socket = writer.get_extra_info("socket")
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # SO_LINGER 0: the close is a reset (RST)

        loop = asyncio.get_running_loop()
        deadline = loop.time() + PATIENCE
        while not access_entries(caplog):
            assert loop.time() < deadline, "the request never ended in the access log"
            await asyncio.sleep(0.01)
        served = await http.post(f"{base}/acp", json=INITIALIZE)

    assert served.status_code == 200  # the server goes on serving
    [gone] = [e for e in access_entries(caplog) if e["path"] == "/acp" and e["status"] != 200]
    assert gone["status"] == 499
    assert not [r for r in caplog.records if "Exception in ASGI application" in r.getMessage()]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in caplog.records if r.exc_info]


class ResetTransport(asyncio.Transport):
    """A transport whose peer has reset the connection: shutting down writing fails."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def is_closing(self) -> bool:
        return self.closed

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        raise OSError(107, "Transport endpoint is not connected")

    def close(self) -> None:
        self.closed = True


async def test_finding_7_closing_a_connection_its_client_reset_does_not_raise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="adapters.http.slow_clients")
    real = ResetTransport()
    transport = LingeringClose(real, asyncio.get_running_loop())
    transport.close()
    assert real.closed
    assert not transport.lingering
    [line] = [r for r in caplog.records if r.name == "adapters.http.slow_clients"]
    assert line.levelno == logging.DEBUG
