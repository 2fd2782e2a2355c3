"""A client that speaks ACP as raw JSON-RPC lines to a spawned `iac-code acp`, for wire
shapes newer than the pinned SDK (notices, ...): every frame either way is checked against
the newest schema file (tests/support/schema_file.py)."""

import asyncio
import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.support import children
from tests.support.patience import PATIENCE
from tests.support.schema_file import SchemaFileValidator, Which
from tests.support.wire_validator import AGENT, CLIENT

IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"
NOTICES: dict[str, Any] = {"session": {"notices": {}}}  # clientCapabilities taking notices


class RawClient:
    """An editor that speaks JSON-RPC lines itself; every frame either way is checked
    against the newest schema file."""

    def __init__(self, process: asyncio.subprocess.Process, which: Which = "stable") -> None:
        self.process = process
        self.schema = SchemaFileValidator(which=which)
        self.received: list[dict[str, Any]] = []
        self._ids = iter(range(1, 1000))

    async def send(self, message: dict[str, Any]) -> None:
        self.schema.check(CLIENT, message)
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> int:
        id_ = next(self._ids)
        await self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        return id_

    async def next_message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), PATIENCE)
        assert line, "the agent closed stdout"
        message: dict[str, Any] = json.loads(line)
        self.schema.check(AGENT, message)
        self.received.append(message)
        return message

    async def answer_to(self, id_: int) -> dict[str, Any]:
        while True:
            message = await self.next_message()
            if message.get("id") == id_ and "method" not in message:
                return message

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.answer_to(await self.request(method, params))

    def updates(self) -> list[dict[str, Any]]:
        return [m["params"]["update"] for m in self.received if m.get("method") == "session/update"]

    def notices(self) -> list[dict[str, Any]]:
        return [u for u in self.updates() if u["sessionUpdate"] == "notice"]

    async def open(self, workdir: Path, capabilities: dict[str, Any]) -> str:
        init = await self.call(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
        )
        assert "result" in init, init
        new = await self.call("session/new", {"cwd": str(workdir), "mcpServers": []})
        session_id: str = new["result"]["sessionId"]
        return session_id


@asynccontextmanager
async def raw_client(
    env: dict[str, str], workdir: Path, which: Which = "stable"
) -> AsyncIterator[RawClient]:
    process = await children.start_async(
        [IAC_CODE, "acp"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=workdir,
        limit=16 * 2**20,
        env={"PATH": "/usr/bin:/bin", **env},
    )
    client = RawClient(process, which)
    try:
        yield client
    finally:
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            await asyncio.wait_for(process.wait(), PATIENCE)
    client.schema.assert_clean()
