"""GET /acp with Upgrade: websocket, over the fake agent, driven by a raw client: the
handshake refusals, the close codes, bad frames, keepalive and a slow reader."""

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest
from websockets.frames import Opcode

from adapters.http.app import create_app
from adapters.http.websocket_protocol import RateLimitedWarning
from tests.http.conftest import FAST, INITIALIZE, FakeAgent, Serve, always_ready, start
from tests.support.patience import PATIENCE
from tests.support.ws_client import RawSocket, open_raw

pytestmark = pytest.mark.integration


def ws_url(base: str, host: str | None = None) -> str:
    url = base.replace("http://", "ws://") + "/acp"
    return url if host is None else url.replace("127.0.0.1", host)


@asynccontextmanager
async def connected(base: str, **headers: str) -> AsyncIterator[RawSocket]:
    response, socket = await open_raw(ws_url(base), headers)
    assert socket is not None, (response.status_code, response.body)
    try:
        yield socket
    finally:
        socket.close()


async def initialized(socket: RawSocket) -> dict[str, Any]:
    socket.send_json(INITIALIZE)
    return await socket.next_message()


async def test_initialize_a_call_and_a_server_request_answered_on_the_socket(
    serve_fake: Serve,
) -> None:
    async with serve_fake() as base:
        response, socket = await open_raw(ws_url(base))
        assert socket is not None
        try:
            init = await initialized(socket)
            socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1}})
            echoed = await socket.next_message()
            socket.send_json({"jsonrpc": "2.0", "id": 2, "method": "ask", "params": {"q": 1}})
            asked = await socket.next_message()
            socket.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": asked["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                }
            )
            answered = await socket.next_message()
        finally:
            socket.close()
    assert response.headers["Acp-Connection-Id"]
    assert init == {"jsonrpc": "2.0", "id": 0, "result": init["result"]}
    assert init["result"]["protocolVersion"] == 1
    assert echoed == {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}
    assert asked["method"] == "session/request_permission"
    assert asked["params"]["toolCall"]["rawInput"] == {"q": 1}
    assert answered == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }


async def test_a_missing_or_wrong_token_is_refused_before_the_upgrade(serve_fake: Serve) -> None:
    async with serve_fake(token="s3cret") as base:
        missing, none_open = await open_raw(ws_url(base))
        wrong, wrong_open = await open_raw(ws_url(base), {"Authorization": "Bearer nope"})
        async with connected(base, Authorization="Bearer s3cret") as socket:
            init = await initialized(socket)
    assert (none_open, wrong_open) == (None, None)
    for refused in (missing, wrong):
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == 'Bearer realm="iac-code"'
        assert "bearer token" in json.loads(refused.body)["error"]
    assert "result" in init


async def test_other_hosts_and_cross_origin_pages_are_refused(serve_fake: Serve) -> None:
    async with serve_fake(allowed_hosts=frozenset({"127.0.0.1"})) as base:
        other_host, host_open = await open_raw(ws_url(base, host="localhost"))
        cross, cross_open = await open_raw(ws_url(base), {"Origin": "http://evil.example"})
        async with connected(base, Origin=base) as socket:  # the page the server serves
            init = await initialized(socket)
    assert (host_open, cross_open) == (None, None)
    assert other_host.status_code == cross.status_code == 403
    assert "host 'localhost'" in json.loads(other_host.body)["error"]
    assert json.loads(cross.body)["error"].startswith("cross-origin requests are not served")
    assert "result" in init


async def test_invalid_json_is_answered_with_a_parse_error_and_the_socket_serves_on(
    serve_fake: Serve,
) -> None:
    async with serve_fake() as base, connected(base) as socket:
        await initialized(socket)
        socket.send_text('{"jsonrpc": "2.0", "id": 1, "method": ')
        parse_error = await socket.next_message()
        socket.send_text("[]")
        not_a_message = await socket.next_message()
        socket.send_json({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"b": 2}})
        echoed = await socket.next_message()
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
    assert not_a_message["id"] is None and not_a_message["error"]["code"] == -32600
    assert echoed == {"jsonrpc": "2.0", "id": 2, "result": {"b": 2}}


async def test_a_frame_over_the_size_limit_closes_with_1009(
    serve_fake: Serve, fake_agent: FakeAgent
) -> None:
    async with serve_fake(max_body_bytes=1000) as base, connected(base) as socket:
        await initialized(socket)
        socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": "y" * 999}})
        close = await socket.closed_with()
        await asyncio.wait_for(fake_agent.stop.wait(), PATIENCE)  # the connection is closed too
    assert close.code == 1009


async def test_a_binary_frame_closes_with_1003_saying_why(
    serve_fake: Serve, fake_agent: FakeAgent
) -> None:
    async with serve_fake() as base, connected(base) as socket:
        await initialized(socket)
        socket.send_binary(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo"}).encode())
        close = await socket.closed_with()
        await asyncio.wait_for(fake_agent.stop.wait(), PATIENCE)
    assert close.code == 1003
    assert "text frame" in close.reason


async def test_the_client_closing_the_socket_closes_the_connection_and_its_calls(
    serve_fake: Serve, fake_agent: FakeAgent
) -> None:
    async with serve_fake() as base, connected(base) as socket:
        await initialized(socket)
        socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "hang"})
        await asyncio.wait_for(fake_agent.started.wait(), PATIENCE)
        socket.protocol.send_close(1000)
        socket._flush()
        close = await socket.closed_with()  # the server's reply to our close
        await asyncio.wait_for(fake_agent.cancelled.wait(), PATIENCE)
    assert close.code == 1000
    assert len(fake_agent.closed_peers) == 1


async def test_server_shutdown_closes_open_sockets_with_1001(fake_agent: FakeAgent) -> None:
    app = create_app(fake_agent, FAST, always_ready)
    server, task, base = await start(app, websocket=FAST)
    try:
        async with connected(base) as socket:
            await initialized(socket)
            socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "hang"})
            await asyncio.wait_for(fake_agent.started.wait(), PATIENCE)
            server.should_exit = True
            close = await socket.closed_with()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, PATIENCE)
    assert close.code == 1001
    assert close.reason == "the server is shutting down"
    assert fake_agent.cancelled.is_set()  # the running call was ended with the connection


async def test_the_server_pings_at_its_interval_and_closes_a_peer_that_stops_answering(
    serve_fake: Serve,
) -> None:
    # Patient with the answering peer (a loaded machine may stall the loop), not the silent.
    patient = serve_fake(ws_ping_interval_seconds=0.05, ws_ping_timeout_seconds=10)
    async with patient as base, connected(base) as answering:
        await initialized(answering)
        pings = [await answering.next_frame() for _ in range(3)]  # answered each time
        answering.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo"})
        still_open = await answering.next_message()
    strict = serve_fake(ws_ping_interval_seconds=0.05, ws_ping_timeout_seconds=0.2)
    async with strict as base, connected(base) as silent:
        silent.answer_pings = False
        close = await silent.closed_with()
    assert [p.opcode for p in pings] == [Opcode.PING] * 3
    assert still_open == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert close.code == 1011
    assert close.reason == "keepalive ping timeout"


async def test_a_client_that_reads_nothing_is_closed_with_1008_and_told_why(
    serve_fake: Serve, fake_agent: FakeAgent
) -> None:
    config = {"buffer_max_events": 4, "sender_patience_seconds": 0.2}
    async with serve_fake(**config) as base, connected(base) as socket:
        await initialized(socket)
        pad = "p" * 65536  # fills the socket's buffers within some hundred messages
        socket.send_json(
            {"jsonrpc": "2.0", "id": 1, "method": "stream", "params": {"count": 5000, "pad": pad}}
        )
        await asyncio.wait_for(fake_agent.stop.wait(), 30)  # nothing read: the server gave up
        close = await socket.closed_with()  # behind what was sent before
    assert close.code == 1008
    assert close.reason.startswith("too far behind: 4 messages unread for 0.2 s")


async def test_a_socket_that_sends_nothing_is_closed_after_the_unused_timeout(
    serve_fake: Serve, fake_agent: FakeAgent
) -> None:
    async with serve_fake(unused_timeout_seconds=0.2) as base, connected(base) as socket:
        close = await socket.closed_with()
    assert close.code == 1008
    assert close.reason.startswith("nothing sent within 0.2 s of opening")
    assert fake_agent.notifications == []  # nothing reached the agent


async def test_a_socket_outlives_the_header_deadline_of_the_request_that_opened_it(
    serve_fake: Serve,
) -> None:
    changes = {"header_timeout_seconds": 0.1, "ws_ping_interval_seconds": 0.05}
    async with serve_fake(**changes) as base, connected(base) as socket:
        await initialized(socket)
        # Pings every 0.05 s: the tenth comes well after the 0.1 s header deadline.
        pings = [await socket.next_frame() for _ in range(10)]
        socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"c": 3}})
        echoed = await socket.next_message()
    assert {p.opcode for p in pings} == {Opcode.PING}
    assert echoed == {"jsonrpc": "2.0", "id": 1, "result": {"c": 3}}


async def test_messages_over_the_event_limit_fail_loudly_instead(serve_fake: Serve) -> None:
    async with serve_fake(max_event_bytes=2000) as base, connected(base) as socket:
        await initialized(socket)
        big = "b" * 3000
        socket.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"big": big}})
        too_large_result = await socket.next_message()
        socket.send_json({"jsonrpc": "2.0", "id": 2, "method": "ask", "params": {"big": big}})
        too_large_request = await socket.next_message()
        socket.send_json(
            {"jsonrpc": "2.0", "id": 3, "method": "stream", "params": {"count": 2, "pad": big}}
        )
        notifications_dropped = await socket.next_message()
    assert too_large_result["id"] == 1 and too_large_result["error"]["code"] == -32603
    assert too_large_result["error"]["data"]["limit"] == 2000
    assert too_large_request["id"] == 2 and too_large_request["error"]["code"] == -32603
    assert "over the limit of 2000 bytes" in too_large_request["error"]["message"]
    assert notifications_dropped == {"jsonrpc": "2.0", "id": 3, "result": {"sent": 2}}


async def test_sockets_and_http_connections_share_the_connection_cap(
    serve_fake: Serve, http: httpx.AsyncClient
) -> None:
    async with serve_fake(max_connections=1) as base:
        async with connected(base) as socket:
            await initialized(socket)
            refused, second = await open_raw(ws_url(base))
            posted = await http.post(f"{base}/acp", json=INITIALIZE)
        assert second is None
        assert refused.status_code == posted.status_code == 503
        assert "too many open connections (1)" in json.loads(refused.body)["error"]
        assert refused.headers["Retry-After"]
        freed = await _initialize_when_free(http, base)
    assert freed.status_code == 200


async def _initialize_when_free(http: httpx.AsyncClient, base: str) -> httpx.Response:
    """The socket's slot is given back once the server has seen it close: poll for it."""
    async with asyncio.timeout(10):
        while True:
            response = await http.post(f"{base}/acp", json=INITIALIZE)
            if response.status_code != 503:
                return response
            await asyncio.sleep(0.01)


def test_websocket_options_follow_the_config() -> None:
    from adapters.http.websocket_protocol import AcpWebSocketProtocol, websocket_options

    options = websocket_options(replace(FAST, max_body_bytes=123, ws_ping_interval_seconds=7))
    assert options["ws"] is AcpWebSocketProtocol
    assert (options["ws_max_size"], options["ws_ping_interval"]) == (123, 7)


async def test_finding_9_invalid_utf8_text_is_closed_with_1007_and_one_short_line(
    serve_fake: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    codes = []
    async with serve_fake() as base:
        for n in range(20):
            async with connected(base) as socket:
                if n % 2:
                    await initialized(socket)
                socket.protocol.send_text(b'{"jsonrpc": "2.0", "\xff\xfe": 1}')
                socket.writer.write(b"".join(socket.protocol.data_to_send()))
                close = await socket.closed_with()
                codes.append((close.code, close.reason))
        async with connected(base) as socket:  # the server serves on
            init = await initialized(socket)
    assert codes == [(1007, "a text frame must be valid UTF-8")] * 20
    assert "result" in init
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) <= 1  # rate-limited (another test's may have been the last)
    assert all("not UTF-8" in w and "1007" in w and "\n" not in w for w in warnings)


def test_finding_9_the_warning_is_written_once_per_interval_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [100.0]
    limited = RateLimitedWarning(10.0, clock=lambda: now[0])
    for at in (100.0, 101.0, 105.0, 109.9, 110.5, 111.0, 125.0):
        now[0] = at
        limited.warn("bad frame from %s", "c")
    assert [r.getMessage() for r in caplog.records] == [
        "bad frame from c",
        "bad frame from c (3 more since the last such line, not logged)",
        "bad frame from c (1 more since the last such line, not logged)",
    ]
