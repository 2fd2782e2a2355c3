"""Two official clients over HTTP on one session of the real server, one that advertised
`session.compaction` and one that did not: a `/compact` is shown to each as it can show
it, from the same journaled updates. Every message is checked against schema.json."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.http import create_http_stream

from tests.e2e.conftest import RecordingClient
from tests.http.test_agent_over_http import agent_server, anthropic_settings
from tests.support.patience import PATIENCE
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text
from tests.support.wire_validator import AGENT, CLIENT

pytestmark = pytest.mark.integration

SUMMARY = ("SUMMARY: parsed, ", "tested, ", "shipped.")


@dataclass
class Watcher(RecordingClient):
    """A client that keeps every frame the agent sends it, checked against schema.json."""

    schema: SchemaFileValidator = field(default_factory=SchemaFileValidator)
    raw: list[dict[str, Any]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def observe(self, event: StreamEvent) -> None:
        message = json.loads(json.dumps(event.message))
        incoming = event.direction is StreamDirection.INCOMING
        self.schema.check(AGENT if incoming else CLIENT, message)
        if incoming:
            self.raw.append(message)
            self._changed.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        async def wait() -> None:
            while not condition():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), PATIENCE)

    def sent(self) -> list[dict[str, Any]]:
        """Each session/update's `update`, as it came (the SDK parses only the older kinds)."""
        return [m["params"]["update"] for m in self.raw if m.get("method") == "session/update"]

    def sent_kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.sent()]

    def said(self) -> str:
        return "".join(
            u["content"]["text"] for u in self.sent() if u["sessionUpdate"] == "agent_message_chunk"
        )


@asynccontextmanager
async def client(base: str, watcher: Watcher, capabilities: dict[str, Any]) -> AsyncIterator[Any]:
    """The official client over HTTP, initialized raw: its SDK has no `session.compaction`."""
    http = httpx.AsyncClient(timeout=httpx.Timeout(None))
    transport = create_http_stream(f"{base}/acp", client=http)
    conn = connect_to_agent(watcher, transport, observers=[watcher.observe])
    try:
        await conn._conn.send_request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "sdk", "version": "1"},
            },
        )
        yield conn
    finally:
        await conn.close()
        await transport.close()
        await http.aclose()


async def test_each_client_of_a_shared_session_sees_a_compaction_as_it_can(
    tmp_path: Path, workdir: Path
) -> None:
    script = (
        stream(text("Parsed.")),
        stream(text("Tested.")),
        stream(text("Shipped.")),
        stream(text(*SUMMARY), input_tokens=400, output_tokens=50),
    )
    capable, plain = Watcher(), Watcher()
    with ScriptedAnthropic(*script) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            client(base, capable, {"session": {"compaction": {}}}) as first,
            client(base, plain, {"fs": {"readTextFile": False}}) as second,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            await second.resume_session(cwd=str(workdir), session_id=sid)
            for words in ("parse", "test", "ship"):
                await first.prompt(session_id=sid, prompt=[text_block(words)])
            result = await first.prompt(session_id=sid, prompt=[text_block("/compact")])
            assert result.stop_reason == "end_turn"
            await plain.until(lambda: "Context compacted" in plain.said())
            await plain.until(lambda: plain.sent_kinds()[-1] == "usage_update")
        model.assert_script_consumed()

    shown = [u for u in capable.sent() if u["sessionUpdate"].startswith("compaction_")]
    started, *chunks, completed = shown
    assert (started["status"], completed["status"]) == ("in_progress", "completed")
    assert "".join(c["content"]["text"] for c in chunks) == "".join(SUMMARY)
    counts = completed["_meta"]["iac_code"]
    assert "Context compacted" not in capable.said()
    assert not [k for k in plain.sent_kinds() if k.startswith("compaction_")]
    before, after = counts["tokensBefore"], counts["tokensAfter"]
    assert plain.said().endswith(f"\n\nContext compacted: {before} → {after} tokens\n\n")
    # The same usage follows for both: the meter's count after the compaction.
    for watcher in (capable, plain):
        usage = [u for u in watcher.sent() if u["sessionUpdate"] == "usage_update"][-1]
        assert (usage["used"], usage["size"]) == (after, counts["size"])
        watcher.schema.assert_clean()
