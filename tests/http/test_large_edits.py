"""Finding 4 over HTTP: a 20 MiB edit used to kill the connection, its permission request
carrying the whole diff (more than the 16 MiB event buffer). The real agent, the real
Anthropic SDK against the scripted model, a real uvicorn server."""

import json
from pathlib import Path

import httpx
import pytest

from tests.http.conftest import AcpHttp
from tests.http.test_agent_over_http import agent_server, anthropic_settings, is_response
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.integration

MiB = 2**20


async def test_finding_4_a_20_mib_edit_over_http_keeps_the_connection(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    workdir = tmp_path / "workspace"
    workdir.mkdir()
    content = "HEAD\n" + "line of text\n" * (20 * MiB // 13)
    replacement = "edited line\n" * (20 * MiB // 12)
    script = (
        stream(
            tool_use("write_file", {"path": "big.txt", "content": content}, id="toolu_write"),
            stop_reason="tool_use",
        ),
        stream(
            tool_use(
                "edit_file",
                {"path": "big.txt", "old_string": "HEAD\n", "new_string": replacement},
                id="toolu_edit",
            ),
            stop_reason="tool_use",
        ),
        stream(text("Both done.")),
    )
    with ScriptedAnthropic(*script) as model:
        async with agent_server(anthropic_settings(tmp_path, model)) as base:
            client = AcpHttp(http, f"{base}/acp")
            await client.initialize()
            async with client.stream() as sse:
                new = await client.request("session/new", {"cwd": str(workdir), "mcpServers": []})
                created = client.received(await sse.until(is_response(new), timeout=30))
                session_id = created[-1]["result"]["sessionId"]
                prompt = await client.request(
                    "session/prompt",
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
                )
                asked, seen = [], []
                while True:
                    event = (await sse.until(lambda e: True, timeout=60))[-1]
                    seen.append(event)
                    message = event.json()
                    if message.get("method") == "session/request_permission":
                        asked.append((len(event.data), message))
                        answer = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                        posted = await client.post(
                            {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                        )
                        assert posted.status_code == 202
                    if message.get("id") == prompt and "method" not in message:
                        break
                listed = await client.request("session/list", {})
                still = client.received(await sse.until(is_response(listed), timeout=30))
        model.assert_script_consumed()
    assert [e.event for e in seen] == ["message"] * len(seen)  # no error event, no overflow
    assert message["result"]["stopReason"] == "end_turn"
    assert [m["params"]["toolCall"]["toolCallId"] for _, m in asked] == [
        "toolu_write",
        "toolu_edit",
    ]
    for size, request in asked:
        assert size < 2 * MiB  # what the client sees is capped...
        (diff,) = request["params"]["toolCall"]["content"]
        assert "truncated for display" in diff["newText"]
    assert (workdir / "big.txt").read_text() == replacement + content[
        len("HEAD\n") :
    ]  # ...not the edit
    assert "result" in still[-1]
    assert max(len(json.dumps(e.json())) for e in seen) < 10 * MiB
