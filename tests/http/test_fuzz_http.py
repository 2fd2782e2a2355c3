"""Fuzzing over HTTP: generated JSON-RPC messages (ACP methods and garbage, params of random
shapes) POSTed to one real server (the real agent, demo model) started once for the module.
Every answer must be well-formed, strict JSON, in the right error family, and say nothing
of the server's insides; and the server must serve normally afterwards."""

import asyncio
import itertools
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st

from adapters.http.app import create_app
from adapters.http.slow_clients import uvicorn_options
from bootstrap.container import release
from bootstrap.http import build_agent, database_ready
from bootstrap.settings import Settings
from tests.http.conftest import FAST, INITIALIZE

pytestmark = [pytest.mark.fuzz, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
ACP_METHODS = [
    "initialize",
    "session/new",
    "session/load",
    "session/list",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_config_option",
    "session/fork",
    "session/resume",
    "session/close",
]
# -32700..-32603: JSON-RPC's own; -32099..-32000: server errors (ACP's auth and not-found).
RPC_CODES = {-32700, -32600, -32601, -32602} | set(range(-32099, -31999))


def no_constants(name: str) -> None:
    raise AssertionError(f"the server sent {name}, which is not JSON")


def strict(data: str | bytes) -> Any:
    return json.loads(data, parse_constant=no_constants)


@dataclass
class Fuzzed:
    """The server, and one connection whose stream a thread reads into `messages`."""

    base: str
    secrets: tuple[str, ...]  # text of the server's insides no answer may show
    connection: str = ""
    messages: list[Any] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def response_to(self, request_id: object, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for message in self.messages:
                    if message.get("id") == request_id and "method" not in message:
                        return message
                left = deadline - time.monotonic()
                assert left > 0, f"no response to request {request_id!r}"
                self.arrived.wait(left)

    def read_stream(self, http: httpx.Client) -> None:
        headers = {"Acp-Connection-Id": self.connection}
        with http.stream("GET", f"{self.base}/acp", headers=headers, timeout=None) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    with self.arrived:
                        self.raw.append(line[6:])
                        self.messages.append(strict(line[6:]))
                        self.arrived.notify_all()


def serve_in_a_thread(settings: Settings) -> tuple[uvicorn.Server, threading.Thread]:
    """The real agent and app on uvicorn, in a thread with its own event loop."""
    holder: dict[str, uvicorn.Server] = {}
    ready = threading.Event()

    async def main() -> None:
        dispatcher, container = build_agent(settings)
        config = replace(FAST, max_connections=1_000)  # every initialize opens one
        app = create_app(dispatcher, config, database_ready(settings.database_url))
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=0,
                log_config=None,
                access_log=False,
                **uvicorn_options(config.header_timeout_seconds),
            )
        )
        holder["server"] = server
        ready.set()
        try:
            await server.serve()
        finally:
            await release(container)

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    assert ready.wait(60)
    server = holder["server"]
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    return server, thread


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    home = tmp_path_factory.mktemp("fuzz-http")
    settings = Settings(
        provider="demo",
        demo_pace=0.0,
        config_dir=home,
        database_url=f"sqlite+aiosqlite:///{home / 'sessions.db'}",
    )
    server, thread = serve_in_a_thread(settings)
    port = server.servers[0].sockets[0].getsockname()[1]
    secrets = (str(ROOT), str(home), "site-packages", "Traceback", os.path.dirname(json.__file__))
    target = Fuzzed(base=f"http://127.0.0.1:{port}", secrets=secrets)
    with httpx.Client(timeout=30) as http:
        opened = http.post(f"{target.base}/acp", json=INITIALIZE)
        target.connection = opened.headers["acp-connection-id"]
        reader = threading.Thread(target=target.read_stream, args=(http,), daemon=True)
        reader.start()
        try:
            yield target
        finally:
            http.delete(f"{target.base}/acp", headers={"Acp-Connection-Id": target.connection})
            reader.join(30)
            server.should_exit = True
            thread.join(30)


# ---- what is sent ------------------------------------------------------------------------

texts = st.text(max_size=30) | st.text(
    alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3
)  # lone surrogates, as \\u escapes
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**20, max_value=10**400)  # huge ints
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


DEEP = "<deep:"  # a string standing for a value nested that many levels deep


def encode(message: dict[str, Any]) -> bytes:
    """The body; a `<deep:N>` string becomes N nested objects and arrays (built as text:
    neither json.dumps nor hypothesis's reports go that deep)."""
    text = json.dumps(message)
    while (start := text.find(f'"{DEEP}')) >= 0:
        end = text.index('>"', start)
        depth = int(text[start + len(DEEP) + 1 : end])
        opening = "".join('{"x":' if n % 2 else "[" for n in range(depth))
        closing = "".join("}" if n % 2 else "]" for n in reversed(range(depth)))
        text = text[:start] + opening + '"bottom"' + closing + text[end + 2 :]
    return text.encode()


field_names = st.sampled_from(
    ["sessionId", "cwd", "mcpServers", "prompt", "modeId", "configId", "value", "cursor"]
)
params = (
    st.dictionaries(field_names | texts, json_values, max_size=5)
    | st.integers(min_value=100, max_value=3000).map(lambda d: {"sessionId": f"{DEEP}{d}>"})
    | json_values  # wrong types: ACP params are always an object
)
methods = st.sampled_from(ACP_METHODS) | texts


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0"]))}
    if draw(st.booleans()):
        message["method"] = draw(methods)
    if draw(st.integers(0, 3)):
        message["params"] = draw(params)
    kind = draw(st.integers(0, 4))
    if kind == 0:
        message["id"] = draw(json_values)  # any shape of id, valid or not
    elif kind < 4:
        message["id"] = f"fuzz-{next(SERIAL)}"  # a request we can find the answer to
    return message


SERIAL = itertools.count()
garbage = st.binary(max_size=40) | st.text(max_size=40).map(str.encode)


# ---- what must come back -----------------------------------------------------------------


def check_text(fuzzed: Fuzzed, text: str) -> None:
    for secret in fuzzed.secrets:
        assert secret not in text, f"an answer shows {secret!r}: {text[:300]}"


def check_response(message: Any, request: dict[str, Any] | None) -> None:
    assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
    assert "id" in message and ("result" in message) != ("error" in message), message
    if "error" in message:
        error = message["error"]
        assert isinstance(error["message"], str) and error["message"]
        assert error["code"] in RPC_CODES, error  # never an internal error (-32603)
        method = (request or {}).get("method")
        unknown = isinstance(method, str) and method and method not in ACP_METHODS
        if unknown and isinstance((request or {}).get("params", {}), dict):
            assert error["code"] in (-32601, -32600), error


def check_answer(fuzzed: Fuzzed, answer: httpx.Response, message: dict[str, Any] | None) -> None:
    check_text(fuzzed, answer.text)
    if answer.status_code == 202:
        assert answer.content == b""
        request_id = (message or {}).get("id")
        if isinstance(request_id, str) and request_id.startswith("fuzz-"):
            check_response(fuzzed.response_to(request_id), message)
        return
    body = strict(answer.content)
    assert answer.headers["content-type"] == "application/json"
    if answer.status_code == 200:  # initialize: the JSON-RPC response itself
        assert message is not None and message.get("method") == "initialize"
        check_response(body, message)
        return
    assert answer.status_code == 400, (answer.status_code, answer.text)
    if "jsonrpc" in body:  # the body is not one JSON-RPC object, or not JSON
        assert body["id"] is None and body["error"]["code"] in (-32700, -32600), body
    else:
        assert isinstance(body["error"], str), body


def post(fuzzed: Fuzzed, http: httpx.Client, body: bytes) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Acp-Connection-Id": fuzzed.connection}
    return http.post(f"{fuzzed.base}/acp", content=body, headers=headers)


@given(message=messages())
def test_fuzzed_json_rpc_messages_are_answered_well_formed(
    fuzzed: Fuzzed, message: dict[str, Any]
) -> None:
    with httpx.Client(timeout=30) as http:
        answer = post(fuzzed, http, encode(message))
        check_answer(fuzzed, answer, message)


@given(body=garbage)
def test_fuzzed_garbage_bodies_are_a_400(fuzzed: Fuzzed, body: bytes) -> None:
    with httpx.Client(timeout=30) as http:
        answer = post(fuzzed, http, body)
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        assert answer.status_code == 400
    check_answer(fuzzed, answer, parsed if isinstance(parsed, dict) else None)


def test_after_the_fuzzing_the_server_serves_and_its_stream_was_well_formed(
    fuzzed: Fuzzed, tmp_path: Path
) -> None:
    new_session = {
        "jsonrpc": "2.0",
        "id": "after-fuzzing",
        "method": "session/new",
        "params": {"cwd": str(tmp_path), "mcpServers": []},
    }
    with httpx.Client(timeout=30) as http:
        opened = http.post(f"{fuzzed.base}/acp", json=INITIALIZE)
        created = post(fuzzed, http, json.dumps(new_session).encode())
    assert opened.status_code == 200 and "result" in opened.json()
    assert created.status_code == 202
    assert fuzzed.response_to("after-fuzzing")["result"]["sessionId"]
    with fuzzed.arrived:
        seen = list(zip(fuzzed.raw, fuzzed.messages, strict=True))
    for raw, message in seen:  # everything the fuzzing above got on the stream, and this
        check_text(fuzzed, raw)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0"
        if "method" not in message:
            check_response(message, None)
