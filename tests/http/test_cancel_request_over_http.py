"""`$/cancel_request` over HTTP: the real agent behind the HTTP transport ends a running
prompt as `session/cancel` would (the dispatcher is the one stdio uses)."""

import asyncio
from pathlib import Path

import httpx
import pytest

from tests.http.conftest import AcpHttp
from tests.http.test_agent_over_http import agent_server, anthropic_settings, is_response
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text
from tests.support.wire_validator import WireValidator

pytestmark = pytest.mark.integration


async def test_cancel_request_ends_a_prompt_waiting_on_the_model(
    tmp_path: Path, workdir: Path, http: httpx.AsyncClient
) -> None:
    reply = stream(text("partial ", "answer"), hang_after=4)
    wire = WireValidator()
    with ScriptedAnthropic(reply) as model:
        async with agent_server(anthropic_settings(tmp_path, model)) as base:
            client = AcpHttp(http, f"{base}/acp", wire=wire)
            await client.initialize()
            async with client.stream() as sse:
                new = await client.request("session/new", {"cwd": str(workdir), "mcpServers": []})
                created = client.received(await sse.until(is_response(new)))
                session_id = created[-1]["result"]["sessionId"]
                prompt = await client.request(
                    "session/prompt",
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
                )
                await asyncio.to_thread(model.wait_for_hang)
                for request_id in (prompt + 100, str(prompt)):  # not this prompt: ignored
                    ignored = await client.post(
                        {
                            "jsonrpc": "2.0",
                            "method": "$/cancel_request",
                            "params": {"requestId": request_id},
                        }
                    )
                    assert ignored.status_code == 202
                cancel = await client.post(
                    {
                        "jsonrpc": "2.0",
                        "method": "$/cancel_request",
                        "params": {"requestId": prompt},
                    }
                )
                assert cancel.status_code == 202
                answered = client.received(await sse.until(is_response(prompt)))
    assert answered[-1]["result"]["stopReason"] == "cancelled"
    wire.assert_clean()
