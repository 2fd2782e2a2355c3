"""Fuzzing the stdio server: generated frames and params for every method, one real process.

Whatever arrives, the server answers a well-formed JSON-RPC response in strict JSON (or
nothing, for a notification), never an internal error, never a traceback or one of its own
paths, and serves a normal session afterwards.
"""

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.conftest import IAC_CODE
from tests.support import children
from tests.support.wire_validator import AGENT, WireValidator

pytestmark = [pytest.mark.e2e, pytest.mark.fuzz]

REPO = str(Path(__file__).resolve().parents[2])
METHODS = [
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/list",
    "sessions/list",
    "session/resume",
    "session/fork",
    "session/close",
    "session/delete",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "config/set",
    "_iac_code/session/rename",
]
# What bad input may be answered with; -32603 (internal error) is never one of them.
EXPECTED_CODES = {-32700, -32600, -32601, -32602, -32000}


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-strict JSON constant {name}")


class Server:
    """The real process; a thread turns its stdout lines into a queue."""

    def __init__(self, workdir: Path, config: Path) -> None:
        self.workdir = workdir
        self.process = children.start(
            [IAC_CODE, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
            env={
                "PATH": os.environ["PATH"],
                "IAC_CODE_CONFIG_DIR": str(config),
                "IAC_CODE_PROVIDER": "demo",
                "IAC_CODE_DEMO_PACE": "0",
            },
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.wire = WireValidator()
        self._ids = iter(range(10**9))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def stop(self) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        self.process.stdout.close()
        return code

    def send(self, frame: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame.replace(b"\n", b" ") + b"\n")
        self.process.stdin.flush()

    def next_id(self) -> str:
        return f"fuzz-{next(self._ids)}"

    def until_answered(self, request_id: object) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Read until the response to `request_id`; every line on the way is checked, and
        permission requests are answered with a rejection."""
        seen = []
        while True:
            raw = self.lines.get(timeout=60)
            message = check_frame(raw)
            seen.append(message)
            if "method" in message:
                self.wire.check(AGENT, message)
                if "id" in message:  # the agent asks: always "no"
                    answer = {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                    self.send(json.dumps(reply).encode())
            elif message.get("id") == request_id:
                return message, seen

    def call(self, method: str, params: object) -> dict[str, Any]:
        request_id = self.next_id()
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.send(json.dumps(frame).encode())
        return self.until_answered(request_id)[0]


def check_frame(raw: bytes) -> dict[str, Any]:
    text = raw.decode("utf-8")  # valid UTF-8, hence no lone surrogates
    message = json.loads(text, parse_constant=_reject_constant)
    assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", text[:300]
    assert "Traceback" not in text and REPO not in text, text[:300]
    if "error" in message:
        error = message["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        assert "result" not in message
        assert error["code"] in EXPECTED_CODES, text[:500]
    return message


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "project").mkdir()
    (root / "project" / "README.md").write_text("# fuzzed\n")
    running = Server(root / "project", root / "config")
    running.call("initialize", {"protocolVersion": 1})
    yield running
    assert running.stop() == 0
    running.wire.assert_clean(allow_unanswered=True)


def serves_normally(server: Server) -> None:
    reply = server.call("session/new", {"cwd": str(server.workdir), "mcpServers": []})
    session_id = reply["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "help"}]}
    assert server.call("session/prompt", prompt)["result"]["stopReason"] == "end_turn"


# -- strategies --

# Text as a client may send it, lone surrogates included (json.dumps escapes them).
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def blocks(draw: st.DrawFn) -> object:
    kind = draw(st.sampled_from(["text", "image", "audio", "resource_link", "resource", "x"]))
    block = {"type": kind, "text": draw(any_text), "uri": draw(any_text), "name": draw(any_text)}
    block.update(
        draw(st.dictionaries(st.sampled_from(["mimeType", "data", "resource"]), json_values))
    )
    return block


def params_for(workdir: str, session_ids: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    field = {
        "sessionId": session_ids | json_values,
        "cwd": st.sampled_from([workdir, "/", "relative", "/no/such/dir"]) | json_values,
        "mcpServers": st.just([]) | json_values,
        "prompt": st.lists(blocks(), max_size=3) | json_values,
        "cursor": any_text | json_values,
        "modeId": st.sampled_from(["default", "plan"]) | json_values,
        "configId": st.sampled_from(["model", "x"]) | json_values,
        "value": st.sampled_from(["demo", "other"]) | json_values,
        "type": st.sampled_from(["select", "boolean"]) | json_values,
        "title": any_text,
        "protocolVersion": st.integers(-5, 5) | json_values,
        "methodId": any_text,
        "_meta": json_values,
    }
    named = st.fixed_dictionaries({}, optional=field)
    return named | json_values


# -- the properties --


@given(data=st.data())
def test_every_method_answers_generated_params_with_a_clean_error_or_result(
    server: Server, data: st.DataObject
) -> None:
    session = server.call("session/new", {"cwd": str(server.workdir), "mcpServers": []})
    session_ids = st.sampled_from([session["result"]["sessionId"], "\ud800", "nope"])
    method = data.draw(st.sampled_from(METHODS) | any_text.filter(bool), label="method")
    params = data.draw(params_for(str(server.workdir), session_ids), label="params")
    reply = server.call(method, params)
    assert ("result" in reply) != ("error" in reply)


@given(
    frame=st.one_of(
        st.binary(max_size=200),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
        st.integers(1, 5000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        st.sampled_from([b"NaN", b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}']),
        st.sampled_from([b'{"jsonrpc":"2.0","id":Infinity,"method":"initialize"}']),
    )
)
def test_any_frame_gets_a_clean_answer_or_none_and_the_server_serves_on(
    server: Server, frame: bytes
) -> None:
    server.send(frame)
    probe = server.next_id()  # replies come in order of reading: the probe's comes after
    server.send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "session/list"}).encode())
    reply, _ = server.until_answered(probe)
    assert "result" in reply


def test_the_server_still_serves_after_the_fuzzing(server: Server) -> None:
    serves_normally(server)
