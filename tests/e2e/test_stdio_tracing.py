"""The real server with OTEL_TRACES_EXPORTER=console: a prompt carrying a W3C traceparent
is exported as spans in the client's trace, on stderr; stdout stays JSON-RPC only (the
wire validator checks every line the client read)."""

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import DEMO, Spawn

pytestmark = pytest.mark.e2e

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


def exported_spans(stderr: str) -> list[dict[str, Any]]:
    """The console exporter's spans: indented JSON objects, each starting on a line of
    its own with "{", between the log lines."""
    decoder = json.JSONDecoder()
    spans, at = [], stderr.find("\n{")
    while at != -1:
        span, end = decoder.raw_decode(stderr, at + 1)
        spans.append(span)
        at = stderr.find("\n{", end)
    return spans


async def test_console_exporter_writes_the_prompts_spans_to_stderr(
    spawn: Spawn, workdir: Path
) -> None:
    (workdir / "app.py").write_text("print('hi')\n")
    env = {**DEMO, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "iac-code-e2e"}
    async with spawn(env) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        result = await agent.conn.prompt(
            session_id=sid, prompt=[text_block("list files")], traceparent=TRACEPARENT
        )
        assert result.stop_reason == "end_turn"
    # The process has ended: its provider flushed the batch on exit.
    spans = exported_spans(agent.stderr())
    in_trace = [s for s in spans if s["context"]["trace_id"] == f"0x{TRACE_ID}"]
    names = {s["name"] for s in in_trace}
    assert {"session/prompt", "turn", "execute_tool list_files", "storage transaction"} <= names
    assert any(name.startswith("chat ") for name in names)
    by_name = {s["name"]: s for s in in_trace}
    request, turn = by_name["session/prompt"], by_name["turn"]
    assert request["parent_id"] == f"0x{PARENT_ID}"
    assert request["kind"] == "SpanKind.SERVER"
    assert turn["parent_id"] == request["context"]["span_id"]
    assert turn["attributes"]["session.id"] == sid
    assert turn["attributes"]["acp.stop_reason"] == "end_turn"
    assert by_name["execute_tool list_files"]["parent_id"] == turn["context"]["span_id"]
    assert request["resource"]["attributes"]["service.name"] == "iac-code-e2e"
    # Stdout carried only protocol messages: the client read (and validated) each line.
    assert agent.sent_by_agent("session/update")


async def test_an_unsupported_exporter_is_refused_at_start(spawn: Spawn) -> None:
    env = {**DEMO, "OTEL_TRACES_EXPORTER": "zipkin"}
    with pytest.raises(Exception):  # noqa: B017, PT011 - the client sees the pipe close
        async with spawn(env) as agent:
            await agent.initialize()
    assert "OTEL_TRACES_EXPORTER: unsupported exporter zipkin" in agent.stderr()
