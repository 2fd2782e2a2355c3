"""Bad input, byte by byte: every case gets a clear JSON-RPC error and the server serves on."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import IAC_CODE
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.e2e


class RawAgent:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []

    async def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        await self.process.stdin.drain()

    async def recv(self, timeout: float = PATIENCE) -> dict[str, Any]:
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "the agent closed stdout"
        self.lines.append(line)
        return json.loads(line)

    async def call(self, id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            reply = await self.recv()
            if reply.get("id") == id and "method" not in reply:
                return reply

    async def initialize(self) -> None:
        reply = await self.call(0, "initialize", {"protocolVersion": 1})
        assert reply["result"]["protocolVersion"] == 1


@asynccontextmanager
async def raw_agent(tmp_path: Path, workdir: Path, **env: str) -> AsyncIterator[RawAgent]:
    process = await asyncio.create_subprocess_exec(
        IAC_CODE,
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=workdir,
        limit=16 * 2**20,
        env={
            "IAC_CODE_CONFIG_DIR": str(tmp_path / "cfg"),
            "IAC_CODE_PROVIDER": "demo",
            "IAC_CODE_DEMO_PACE": "0",
            "PATH": "/usr/bin:/bin",
            **env,
        },
    )
    agent = RawAgent(process)
    yield agent
    if process.returncode is None:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), PATIENCE)
    for line in agent.lines:  # stdout carried nothing but JSON-RPC objects
        assert isinstance(json.loads(line), dict)


@pytest.fixture
async def raw(tmp_path: Path, workdir: Path) -> AsyncIterator[RawAgent]:
    async with raw_agent(tmp_path, workdir) as agent:
        yield agent


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" not in reply, reply
    return reply["error"]


async def test_invalid_json_is_a_parse_error_and_reading_goes_on(raw: RawAgent) -> None:
    await raw.send(b"{not json")
    reply = await raw.recv()
    assert reply["id"] is None
    assert error_of(reply)["code"] == -32700
    assert "details" in reply["error"]["data"]
    await raw.initialize()


@pytest.mark.parametrize(
    "line",
    [
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]',
        b"42",
        b'"text"',
        b"null",
        b"true",
        b'{"jsonrpc":"2.0"}',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}',
    ],
)
async def test_non_requests_are_invalid_requests(raw: RawAgent, line: bytes) -> None:
    await raw.send(line)
    reply = await raw.recv()
    assert reply["id"] is None
    assert error_of(reply)["code"] == -32600
    assert reply["error"]["data"]
    await raw.initialize()


async def test_wrong_jsonrpc_version_is_an_invalid_request(raw: RawAgent) -> None:
    await raw.send({"jsonrpc": "1.0", "id": 7, "method": "initialize", "params": {}})
    reply = await raw.recv()
    assert reply["id"] == 7 and error_of(reply)["code"] == -32600


async def test_unknown_methods(raw: RawAgent) -> None:
    await raw.initialize()
    reply = await raw.call(1, "session/teleport", {})
    assert error_of(reply)["code"] == -32601
    assert reply["error"]["data"] == {"method": "session/teleport"}
    reply = await raw.call(2, "_vendor/thing", {})
    assert error_of(reply)["code"] == -32601
    # unknown notifications are ignored: the next answer is for the next request
    await raw.send({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}})
    await raw.send({"jsonrpc": "2.0", "method": "session/whatever"})
    reply = await raw.call(3, "initialize", {"protocolVersion": 1})
    assert "result" in reply


async def test_bad_params_name_the_field(raw: RawAgent, workdir: Path) -> None:
    await raw.initialize()
    reply = await raw.call(1, "session/new", {"mcpServers": []})
    assert error_of(reply)["code"] == -32602
    assert reply["error"]["data"]["errors"][0]["field"] == "cwd"
    reply = await raw.call(2, "session/new", {"cwd": str(workdir), "mcpServers": "none"})
    assert reply["error"]["data"]["errors"][0]["field"] == "mcpServers"
    # the product documents' form, without mcpServers, means "no MCP servers"
    reply = await raw.call(21, "session/new", {"cwd": str(workdir)})
    assert reply["result"]["sessionId"]
    reply = await raw.call(3, "session/new", [str(workdir)])
    assert error_of(reply)["code"] == -32602 and reply["error"]["data"]["field"] == "params"
    reply = await raw.call(4, "initialize", {})
    assert reply["error"]["data"]["field"] == "protocolVersion"
    new = await raw.call(5, "session/new", {"cwd": str(workdir), "mcpServers": []})
    sid = new["result"]["sessionId"]
    reply = await raw.call(6, "session/prompt", {"sessionId": sid, "prompt": "hello"})
    assert error_of(reply)["code"] == -32602
    assert reply["error"]["data"]["errors"][0]["field"].startswith("prompt")
    reply = await raw.call(7, "session/prompt", {"sessionId": sid, "prompt": []})
    assert reply["error"]["data"]["field"] == "prompt"
    reply = await raw.call(
        8, "session/prompt", {"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "x"}]}
    )
    assert error_of(reply)["code"] == -32602
    assert reply["error"]["data"] == {"sessionId": "sess_nope"}
    # the session still works after all that
    reply = await raw.call(
        9, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "ok?"}]}
    )
    assert reply["result"]["stopReason"] == "end_turn"


async def test_ids_keep_their_json_type(raw: RawAgent) -> None:
    for request_id in ("abc", 2**53 + 1, 0, None):
        reply = await raw.call(request_id, "initialize", {"protocolVersion": 1})
        assert reply["id"] == request_id and type(reply["id"]) is type(request_id)


async def test_protocol_version_is_negotiated_to_one(raw: RawAgent) -> None:
    reply = await raw.call(1, "initialize", {"protocolVersion": 7})
    assert reply["result"]["protocolVersion"] == 1
    # A date string is not the schema's uint16 (issue 25, finding 7): refused, not read as 1.
    reply = await raw.call(2, "initialize", {"protocolVersion": "2024-11-05"})
    assert reply["error"]["code"] == -32602


async def test_product_document_aliases(raw: RawAgent, workdir: Path) -> None:
    await raw.initialize()
    sid = (await raw.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []}))["result"][
        "sessionId"
    ]
    reply = await raw.call(
        2, "config/set", {"sessionId": sid, "configId": "model", "value": "demo"}
    )
    options = {o["id"]: o["currentValue"] for o in reply["result"]["configOptions"]}
    assert options["model"] == "demo"
    reply = await raw.call(4, "sessions/list", {"cwd": str(workdir)})
    assert [s["sessionId"] for s in reply["result"]["sessions"]] == [sid]
    reply = await raw.call(3, "config/set", {"sessionId": sid, "configId": "model", "value": 3})
    assert error_of(reply)["code"] == -32602


async def test_notifications_and_stray_responses_are_never_answered(raw: RawAgent) -> None:
    await raw.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}})
    await raw.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})
    await raw.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    await raw.send({"jsonrpc": "2.0", "id": "zz", "error": {"code": 1, "message": "x"}})
    reply = await raw.call(5, "initialize", {"protocolVersion": 1})
    assert "result" in reply
    assert len(raw.lines) == 1


async def test_large_messages_round_trip(raw: RawAgent, workdir: Path) -> None:
    await raw.initialize()
    sid = (await raw.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []}))["result"][
        "sessionId"
    ]
    big = "ü" * 2**20  # 6 MiB as JSON escapes: under the 10 MiB line limit
    reply = await raw.call(
        2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": big}]}
    )
    assert reply["result"]["stopReason"] == "end_turn"


def _peak_rss_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) * 1024 for line in status.splitlines() if "VmHWM" in line)


async def test_finding_7_an_oversized_line_is_refused_without_being_held(
    tmp_path: Path, workdir: Path
) -> None:
    async with raw_agent(tmp_path, workdir, IAC_CODE_MAX_MESSAGE_BYTES=str(2**20)) as raw:
        await raw.initialize()
        await raw.call(1, "session/list", {})  # the agent is fully loaded
        before = _peak_rss_bytes(raw.process.pid)
        prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "x" * (64 * 2**20)}]}
        await raw.send({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": prompt})
        reply = await raw.recv(timeout=60)
        assert reply["id"] is None  # the id sat in the part that was never read
        assert error_of(reply)["code"] == -32600
        assert error_of(reply)["data"]["limit"] == 2**20
        assert error_of(reply)["data"]["size"] > 64 * 2**20
        # The 64 MiB line went by in pieces: the server's peak memory barely moved.
        assert _peak_rss_bytes(raw.process.pid) - before < 16 * 2**20
        await raw.initialize()  # and it serves on


async def test_exits_cleanly_when_stdin_closes(raw: RawAgent) -> None:
    await raw.initialize()
    raw.process.stdin.close()
    assert await asyncio.wait_for(raw.process.wait(), PATIENCE) == 0


async def test_absurd_nesting_and_broken_client_errors_do_not_stop_the_server(
    raw: RawAgent,
) -> None:
    await raw.send(b"[" * 100_000)
    reply = await raw.recv()
    assert error_of(reply)["code"] in (-32700, -32600)
    await raw.send({"jsonrpc": "2.0", "id": 0, "error": {"code": "oops", "message": 1}})
    await raw.initialize()


async def test_sessions_can_be_renamed_through_the_extension_method(
    raw: RawAgent, workdir: Path
) -> None:
    await raw.initialize()
    sid = (await raw.call(1, "session/new", {"cwd": str(workdir)}))["result"]["sessionId"]
    # After the answer, the new session's commands, then its usage.
    announced = [(await raw.recv())["params"]["update"]["sessionUpdate"] for _ in range(2)]
    assert announced == ["available_commands_update", "usage_update"]
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "_iac_code/session/rename",
            "params": {"sessionId": sid, "title": "Renamed"},
        }
    )
    notice = await raw.recv()
    assert notice["params"]["update"] == {
        "sessionUpdate": "session_info_update",
        "title": "Renamed",
    }
    assert (await raw.recv())["result"] == {"title": "Renamed"}
    listed = await raw.call(3, "session/list", {"cwd": str(workdir)})
    assert listed["result"]["sessions"][0]["title"] == "Renamed"
    bad = await raw.call(4, "_iac_code/session/rename", {"sessionId": sid})
    assert error_of(bad)["code"] == -32602
