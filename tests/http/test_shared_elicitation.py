"""An `ask_user` question in a session several official SDK clients follow over HTTP: a
copy to each client that advertised form elicitation (one that attaches meanwhile too),
none to one that did not, the first answer wins and the other copy is withdrawn."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.http import create_http_stream
from acp.schema import ClientCapabilities, Implementation

from tests.e2e.test_stdio_elicitation import BRANCH, FORM_ONLY
from tests.http.test_agent_over_http import agent_server, anthropic_settings
from tests.http.test_shared_sessions import DEADLINE, Follower, first_turn_state
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT, CLIENT

pytestmark = pytest.mark.integration


@dataclass
class Asked(Follower):
    """Answers a question with `reply`, or (with `hold`) never: a user who walked away."""

    reply: dict[str, Any] = field(default_factory=lambda: {"action": "cancel"})
    questions: list[str] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> dict[str, Any]:
        self.questions.append(message)
        self._changed.set()
        if self.hold:
            await asyncio.Event().wait()
        return self.reply


@asynccontextmanager
async def sdk(
    base: str, client: Follower, capabilities: ClientCapabilities | None = None
) -> AsyncIterator[Any]:
    """The official client over HTTP+SSE, with the unstable methods (elicitation) routed."""

    def observe(event: StreamEvent) -> None:
        message = json.loads(json.dumps(event.message))
        incoming = event.direction is StreamDirection.INCOMING
        client.wire.check(AGENT if incoming else CLIENT, message)
        if incoming:
            client.saw(message)

    http = httpx.AsyncClient(timeout=httpx.Timeout(None))
    transport = create_http_stream(f"{base}/acp", client=http)
    conn = connect_to_agent(client, transport, observers=[observe], use_unstable_protocol=True)
    try:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities(),
            client_info=Implementation(name="sdk", version="1"),
        )
        yield conn
    finally:
        await conn.close()
        await transport.close()
        await http.aclose()


def schema_clean(client: Follower) -> None:
    checker = SchemaFileValidator()
    for message in client.raw:
        if message.get("method") in ("elicitation/create", "$/cancel_request"):
            checker.check(AGENT, message)
    checker.assert_clean()


async def test_a_question_goes_to_every_client_that_shows_forms_and_the_first_answer_wins(
    tmp_path: Path, workdir: Path
) -> None:
    ask = tool_use("ask_user", BRANCH, id="toolu_q1")
    script = (stream(ask, stop_reason="tool_use"), stream(text("On dev.")))
    a = Asked(hold=True)
    b = Asked(reply={"action": "accept", "content": {"answer": "dev"}})
    blind = Asked()
    with ScriptedAnthropic(*script) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a, FORM_ONLY) as first,
            sdk(base, b, FORM_ONLY) as second,
            sdk(base, blind) as third,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            await third.resume_session(cwd=str(workdir), session_id=sid)
            prompt = asyncio.ensure_future(first.prompt(session_id=sid, prompt=[text_block("go")]))
            await a.until(lambda: bool(a.questions))
            # b attaches while the question is pending: it gets its own copy and answers.
            await second.resume_session(cwd=str(workdir), session_id=sid)
            assert (await asyncio.wait_for(prompt, DEADLINE)).stop_reason == "end_turn"
            await a.until(lambda: bool(a.incoming("$/cancel_request")))
            await blind.until(lambda: blind.agent_text() == "On dev.")
        model.assert_script_consumed()
    [a_copy] = a.incoming("elicitation/create")
    [b_copy] = b.incoming("elicitation/create")
    assert a_copy["params"] == b_copy["params"]
    assert [m["params"] for m in a.incoming("$/cancel_request")] == [{"requestId": a_copy["id"]}]
    assert blind.incoming("elicitation/create") == [] and blind.questions == []
    assert first_turn_state(b) == {"state": "running"}  # a question is not a permission
    (result,) = [b for b in model.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "The user answered: dev"
    for client in (a, b, blind):
        assert client.tool_updates("toolu_q1")[-1].status == "completed"
        client.wire.assert_clean()
    schema_clean(a)
    schema_clean(b)
