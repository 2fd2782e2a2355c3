"""A client that reads stdout slowly: it still gets the whole text, in order, in fewer
chunks, and the agent does not pile up what it could not write yet."""

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import IAC_CODE, anthropic_env
from tests.support import children
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text
from tests.support.updates import chunk_texts, rss_kib

pytestmark = pytest.mark.e2e

DELTAS = 50_000


class PipeClient:
    """Raw JSON lines over pipes, read only when the test says so."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.ids = iter(range(1, 10**6))

    def send(self, method: str, params: dict[str, Any]) -> int:
        request_id = next(self.ids)
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        return request_id

    def read_until(self, request_id: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every message up to the response to `request_id`, and that response."""
        assert self.process.stdout is not None
        seen: list[dict[str, Any]] = []
        for line in self.process.stdout:
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return seen, message
            seen.append(message)
        raise AssertionError("the agent closed stdout")

    def next_chunk(self) -> str:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            texts = chunk_texts([json.loads(line)])
            if texts:
                return texts[0]
        raise AssertionError("the agent closed stdout")

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        _, reply = self.read_until(self.send(method, params))
        return reply["result"]


def spawn(tmp_path: Path, server: ScriptedAnthropic) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "cfg"),
        "IAC_CODE_LOG_LEVEL": "WARNING",
        **anthropic_env(server),
    }
    return children.start(
        [IAC_CODE, "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=env,
    )


def close(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()


def test_a_client_that_reads_slowly_gets_all_the_text_in_fewer_chunks(
    tmp_path: Path, server: ScriptedAnthropic
) -> None:
    letters = [chr(ord("a") + i % 26) for i in range(DELTAS)]
    server.script(stream(text("warm")), stream(text(*letters)))
    process = spawn(tmp_path, server)
    client = PipeClient(process)
    try:
        client.call("initialize", {"protocolVersion": 1})
        session = client.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        said = [{"type": "text", "text": "go"}]
        client.call("session/prompt", {"sessionId": session["sessionId"], "prompt": said})
        before = rss_kib(process.pid)  # the model's SDK is loaded: only the turn counts
        prompt = client.send(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
        )
        server.wait_for_streams(2, timeout=120)  # the model is done; the client read nothing
        grown_mib = (rss_kib(process.pid) - before) / 1024
        updates, reply = client.read_until(prompt)
    finally:
        close(process)

    chunks = chunk_texts(updates)
    assert reply["result"]["stopReason"] == "end_turn"
    assert "".join(chunks) == "".join(letters)
    assert len(chunks) < DELTAS // 10
    assert grown_mib < 25, f"the agent grew by {grown_mib:.1f} MiB while the client read nothing"


def test_the_first_chunk_is_not_held_back(tmp_path: Path, server: ScriptedAnthropic) -> None:
    release = threading.Event()
    server.script(stream(text("first"), HANG, text(" second"), release=release))
    process = spawn(tmp_path, server)
    client = PipeClient(process)
    try:
        client.call("initialize", {"protocolVersion": 1})
        session = client.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        prompt = client.send(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
        )
        first = client.next_chunk()  # the model is still hanging after its first delta
        release.set()
        updates, reply = client.read_until(prompt)
    finally:
        close(process)

    assert first == "first"
    assert reply["result"]["stopReason"] == "end_turn"
    assert chunk_texts(updates) == [" second"]
