"""Finding 12: slow clients cannot hold connections open forever. Raw sockets against a real
uvicorn on 127.0.0.1 with short deadlines: partial headers and partial bodies are closed
with a 408, and everyone else is served meanwhile."""

import asyncio
import json

import httpx
import pytest

from tests.http.conftest import INITIALIZE, Serve

pytestmark = pytest.mark.integration

SHORT = {"header_timeout_seconds": 0.5, "body_timeout_seconds": 0.5}


async def open_raw(base: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = base.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def answer_then_close(reader: asyncio.StreamReader) -> bytes:
    """Everything the server writes until it closes the connection (generous bound)."""
    return await asyncio.wait_for(reader.read(), 30)


def status_and_body(raw: bytes) -> tuple[int, object]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower()
    return status, json.loads(body)


async def test_finding_12_300_unfinished_requests_are_closed_before_authentication(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(token="s3cret", **SHORT) as base:
        slow = []
        for n in range(300):
            reader, writer = await open_raw(base)
            # A third send nothing at all, the others part of their headers at once: written
            # only after all 300 were open, a busy machine could take longer than the
            # deadline to open them, and a connection then had "sent nothing" when it ended.
            if n % 3:
                writer.write(b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
                await writer.drain()
            slow.append((reader, writer))
        served = await http.post(
            f"{base}/acp", json=INITIALIZE, headers={"Authorization": "Bearer s3cret"}
        )
        answers = [await answer_then_close(reader) for reader, _ in slow]
        for _, writer in slow:
            writer.close()
        async with httpx.AsyncClient() as fresh:  # `http`'s idle connection expired too
            after = await fresh.post(
                f"{base}/acp", json=INITIALIZE, headers={"Authorization": "Bearer s3cret"}
            )
    assert served.status_code == 200
    assert after.status_code == 200
    for n, answer in enumerate(answers):
        if n % 3:
            assert status_and_body(answer) == (
                408,
                {"error": "the request headers did not arrive within 0.5 s"},
            )
        else:  # nothing was asked: closed without a word, as an idle keep-alive connection
            assert answer == b""


async def test_finding_12_a_partial_body_gets_408_and_the_connection_closes(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(**SHORT) as base:
        reader, writer = await open_raw(base)
        writer.write(
            b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n"
            b'{"jsonrpc":'
        )
        await writer.drain()
        served = await http.post(f"{base}/acp", json=INITIALIZE)
        answer = await answer_then_close(reader)
        writer.close()
    assert served.status_code == 200
    assert status_and_body(answer) == (408, {"error": "the body did not arrive within 0.5 s"})
    assert b"connection: close" in answer.lower()


async def test_finding_12_a_chunked_body_sent_forever_gets_408(serve_fake: Serve) -> None:
    async with serve_fake(**SHORT) as base:
        reader, writer = await open_raw(base)
        writer.write(
            b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"
        )
        await writer.drain()

        async def trickle() -> None:  # one byte now and then, never the end
            while True:
                await asyncio.sleep(0.05)
                writer.write(b"1\r\n \r\n")
                await writer.drain()

        trickling = asyncio.create_task(trickle())
        try:
            answer = await answer_then_close(reader)
        finally:
            trickling.cancel()
            await asyncio.gather(trickling, return_exceptions=True)
            writer.close()
    assert status_and_body(answer)[0] == 408


async def test_finding_12_a_keep_alive_connection_gets_the_deadline_again_for_its_next_request(
    serve_fake: Serve,
) -> None:
    async with serve_fake(**SHORT) as base:
        reader, writer = await open_raw(base)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        await writer.drain()
        answer = await answer_then_close(reader)
        writer.close()
    first, _, rest = answer.partition(b"HTTP/1.1 408")
    assert first.startswith(b"HTTP/1.1 200") and b'{"status":"ok"}' in first
    assert b"the request headers did not arrive within 0.5 s" in rest


def test_finding_12_the_deadlines_are_settings() -> None:
    from bootstrap.http_settings import load_http_config

    defaults = load_http_config({})
    assert (defaults.header_timeout_seconds, defaults.body_timeout_seconds) == (10, 30)
    config = load_http_config(
        {"IAC_CODE_HTTP_HEADER_TIMEOUT_SECONDS": "2", "IAC_CODE_HTTP_BODY_TIMEOUT_SECONDS": "3"}
    )
    assert (config.header_timeout_seconds, config.body_timeout_seconds) == (2, 3)
