"""A client that reads its event stream slowly, against the real server process: the
whole text arrives, in order, in fewer chunks, and the server holds little meanwhile."""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import anthropic_env
from tests.e2e.conftest import server as server  # the scripted model, as a fixture
from tests.http.walkthrough import free_port, server_process
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text
from tests.support.updates import chunk_texts, rss_kib

pytestmark = pytest.mark.e2e

# Far more events than the connection's buffer keeps (10,000): without merging, a client
# that reads nothing while they stream would lose its connection to a buffer overflow.
DELTAS = 60_000


class SlowStream:
    """The connection's SSE stream, read only when the test asks."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines

    def messages(self) -> Iterator[dict[str, Any]]:
        for line in self._lines:
            if line.startswith("data: "):
                yield json.loads(line[len("data: ") :])
            elif line.startswith("event: error"):
                raise AssertionError(f"the stream failed: {next(self._lines)}")

    def until(self, request_id: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        for message in self.messages():
            if message.get("id") == request_id and "method" not in message:
                return seen, message
            seen.append(message)
        raise AssertionError("the stream ended")


def test_a_client_reading_its_stream_slowly_gets_all_the_text_in_fewer_chunks(
    tmp_path: Path, server: ScriptedAnthropic
) -> None:
    letters = [chr(ord("a") + i % 26) for i in range(DELTAS)]
    server.script(stream(text("warm")), stream(text(*letters)))
    env = {
        "PATH": os.environ["PATH"],
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "data"),
        "IAC_CODE_LOG_LEVEL": "WARNING",
        **anthropic_env(server),
    }
    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    with (
        server_process(argv, env, tmp_path / "server.log") as (base, process),
        httpx.Client(base_url=base, timeout=60) as http,
    ):
        reply = http.post(
            "/acp",
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 1},
            },
        )
        headers = {"Acp-Connection-Id": reply.headers["Acp-Connection-Id"]}

        def post(request_id: int, method: str, params: dict[str, Any]) -> None:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            assert http.post("/acp", json=message, headers=headers).status_code == 202

        with http.stream("GET", "/acp", headers=headers) as events:
            sse = SlowStream(events.iter_lines())
            post(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session_id = sse.until(1)[1]["result"]["sessionId"]
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
            post(2, "session/prompt", prompt)
            sse.until(2)  # the first turn loads the model's SDK: not counted below
            before = rss_kib(process.pid)
            post(3, "session/prompt", prompt)
            server.wait_for_streams(2, timeout=120)  # the model is done; we read nothing
            grown_mib = (rss_kib(process.pid) - before) / 1024
            updates, answer = sse.until(3)

    chunks = chunk_texts(updates)
    assert answer["result"]["stopReason"] == "end_turn"
    assert "".join(chunks) == "".join(letters)
    assert len(chunks) < DELTAS // 10
    assert grown_mib < 25, f"the server grew by {grown_mib:.1f} MiB while the client read nothing"
