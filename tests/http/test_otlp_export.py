"""The real HTTP server with OTEL_TRACES_EXPORTER=otlp exports a prompt's spans over
OTLP/HTTP to a collector the test serves on 127.0.0.1, in the trace the client's
`_meta.traceparent` named."""

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.http import create_http_stream
from acp.schema import ClientCapabilities, Implementation
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.http.walkthrough import free_port, server_process
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.e2e

TRACE_ID = "5b8efff798038103d269b633813fc60c"
PARENT_ID = "eee19b7ec3c1b174"


class Collector(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receive)
        self.bodies: list[bytes] = []
        self.paths: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def spans(self) -> list[Any]:
        found = []
        for body in self.bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    found.extend((resource.resource, span) for span in scope.spans)
        return found


class _Receive(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.paths.append(self.path)
        self.server.bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Quiet:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass


async def test_a_prompts_spans_reach_an_otlp_collector(
    tmp_path: Path, collector: Collector
) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    (workdir / "app.py").write_text("print('hi')\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
    }
    wire = WireValidator()

    def observe(event: StreamEvent) -> None:
        sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
        wire.check(sender, json.loads(json.dumps(event.message)))

    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    with server_process(argv, env, tmp_path / "server.log") as (base, _):
        http = httpx.AsyncClient(timeout=httpx.Timeout(None))
        transport = create_http_stream(f"{base}/acp", client=http)
        conn = connect_to_agent(Quiet(), transport, observers=[observe])
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="otlp-test", version="1"),
            )
            session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(
                session_id=session.session_id,
                prompt=[text_block("list files")],
                traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01",
                tracestate="team=acp",
            )
            assert result.stop_reason == "end_turn"
        finally:
            await conn.close()
            await transport.close()
            await http.aclose()
    # SIGTERM ended the server; its provider flushed the batch to the collector on exit.
    wire.assert_clean()
    assert set(collector.paths) == {"/v1/traces"}
    ours = [(r, s) for r, s in collector.spans() if s.trace_id.hex() == TRACE_ID]
    by_name = {s.name: s for _, s in ours}
    assert {"session/prompt", "turn", "execute_tool list_files", "storage transaction"} <= set(
        by_name
    )
    request, turn = by_name["session/prompt"], by_name["turn"]
    assert request.parent_span_id.hex() == PARENT_ID
    assert request.trace_state == "team=acp"
    assert turn.parent_span_id == request.span_id
    assert by_name["execute_tool list_files"].parent_span_id == turn.span_id
    attributes = {a.key: a.value.string_value for a in turn.attributes}
    assert attributes["session.id"] == session.session_id
    assert attributes["acp.stop_reason"] == "end_turn"
    resource = {a.key: a.value.string_value for a in ours[0][0].attributes}
    assert resource["service.name"] == "iac-code"
