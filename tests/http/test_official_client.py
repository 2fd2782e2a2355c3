"""The official SDK's Streamable-HTTP client (`acp.http.create_http_stream`) against the
transport over a fake agent: an agent→client request answered through the client's POST,
with the per-session GET the client opens when it sees a session id."""

import json
import logging
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent
from acp.connection import StreamDirection, StreamEvent
from acp.http import create_http_stream
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    RequestPermissionResponse,
)

from tests.http.conftest import FakeAgent, Serve
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.integration


class AllowingClient:
    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((session_id, tool_call))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id)
        )


async def test_a_permission_round_trip_through_the_official_client(
    serve_fake: Serve, fake_agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="iac_code.http.access")
    wire = WireValidator()

    extension_ids: set[Any] = set()  # the `_ask` call is outside the schema

    def observe(event: StreamEvent) -> None:
        sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
        message = event.message
        if message.get("method", "").startswith("_"):
            extension_ids.add(message["id"])
        elif "method" in message or sender == CLIENT or message["id"] not in extension_ids:
            wire.check(sender, json.loads(json.dumps(message)))

    async with serve_fake() as base:
        client = AllowingClient()
        http = httpx.AsyncClient(timeout=httpx.Timeout(None))
        transport = create_http_stream(f"{base}/acp", client=http)
        conn = connect_to_agent(client, transport, observers=[observe])
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="sdk", version="1"),
            )
            answer = await conn.ext_method("ask", {"path": "/tmp/x"})
        finally:
            await conn.close()
            await transport.close()
            await http.aclose()
    assert answer == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    assert [(sid, call.tool_call_id) for sid, call in client.asked] == [("s1", "call_1")]
    session_streams = [r for r in caplog.records if '"rpc": "stream:session"' in r.getMessage()]
    assert session_streams and '"status": 200' in session_streams[0].getMessage()
    assert len(fake_agent.closed_peers) == 1  # the client's DELETE
    wire.assert_clean()
