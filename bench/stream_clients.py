"""The streaming turn with three WebSocket clients on one session: the agent's CPU for it.

One `iac-code http` (a new SQLite file, the journal on as always), the model served by the
scripted Messages API. The first client opens the session, the two others attach with
`session/resume`; all three read every frame as it comes. The turn counts from the prompt
until every client has the whole text.

Run alone:  .venv/bin/python bench/stream_clients.py [--deltas 20000] [--runs 3]
"""

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, cpu_seconds, median, print_table
from tests.support.cluster import start_replica, wait_until_ready
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text

LETTERS = "abcdefghijklmnopqrstuvwxyz"
CLIENTS = 3


def pieces(count: int) -> tuple[str, ...]:
    return tuple(LETTERS[i % len(LETTERS)] for i in range(count))


class Client:
    """One WebSocket client that reads every message as it comes."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.text: list[str] = []
        self._ids = iter(range(1, 10**9))
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.socket:
            message = json.loads(frame)
            if "id" in message and "method" not in message:
                self._replies.pop(message["id"]).set_result(message)
            elif message.get("method") == "session/update":
                update = message["params"]["update"]
                if update["sessionUpdate"] == "agent_message_chunk":
                    self.text.append(update["content"]["text"])

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        reply = self._replies[request_id] = asyncio.get_running_loop().create_future()
        await self.socket.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        answer = await asyncio.wait_for(reply, 300)
        if "result" not in answer:
            raise RuntimeError(f"{method} failed: {answer}")
        result: dict[str, Any] = answer["result"]
        return result

    async def has(self, expected: str) -> None:
        deadline = time.perf_counter() + 300
        while len("".join(self.text)) < len(expected):
            if time.perf_counter() > deadline:
                raise AssertionError("a client did not receive the whole text")
            await asyncio.sleep(0.005)
        assert "".join(self.text) == expected, "the text arrived incomplete or out of order"

    async def close(self) -> None:
        await self.socket.close()
        self._reading.cancel()


async def turns(
    url: str, token: str, cwd: str, server: ScriptedAnthropic, pid: int, deltas: int, runs: int
) -> list[float]:
    headers = {"Authorization": f"Bearer {token}"}
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(CLIENTS):
            socket = await stack.enter_async_context(
                connect(url, additional_headers=headers, max_size=None)
            )
            client = Client(socket)
            stack.push_async_callback(client.close)
            await client.call("initialize", {"protocolVersion": 1})
            clients.append(client)
        first = clients[0]
        session = (await first.call("session/new", {"cwd": cwd, "mcpServers": []}))["sessionId"]
        for client in clients[1:]:
            await client.call(
                "session/resume", {"sessionId": session, "cwd": cwd, "mcpServers": []}
            )
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "stream"}]}
        cpu: list[float] = []
        for run in range(runs + 1):  # the first loads the SDK: not counted
            count = deltas if run else 2
            for client in clients:
                client.text.clear()
            server.script(stream(text(*pieces(count))))
            await asyncio.sleep(0.3)  # what the resumes announced has arrived
            before = cpu_seconds(pid)
            result = await first.call("session/prompt", prompt)
            assert result["stopReason"] == "end_turn", result
            expected = "".join(pieces(count))
            await asyncio.gather(*(client.has(expected) for client in clients))
            if run:
                cpu.append(cpu_seconds(pid) - before)
        return cpu


def measure(runs: int = 3, deltas: int = 20_000) -> list[Row]:
    token = f"bench-{uuid.uuid4().hex}"
    with tempfile.TemporaryDirectory(prefix="iac-stream-") as tmp, ScriptedAnthropic() as server:
        root = Path(tmp)
        env = {
            "IAC_CODE_PROVIDER": "anthropic",
            "IAC_CODE_API_KEY": "bench-key",
            "IAC_CODE_BASE_URL": server.base_url,
            "IAC_CODE_MODEL": "claude-test",
            "IAC_CODE_MAX_RETRIES": "0",
            "IAC_CODE_LOG_LEVEL": "WARNING",
        }
        replica = start_replica("r1", root, f"sqlite+aiosqlite:///{root}/store.db", token, env)
        try:
            wait_until_ready(replica)
            url = replica.url.replace("http://", "ws://") + "/acp"
            cpu = asyncio.run(
                turns(url, token, str(root), server, replica.process.pid, deltas, runs)
            )
        finally:
            replica.stop()
    return [
        Row(
            f"the same with {CLIENTS} WebSocket clients attached",
            median(cpu),
            "s",
            0.35,
            f"{median(cpu) / deltas * 1e6:.1f} µs per delta",
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_table(measure(args.runs, args.deltas))


if __name__ == "__main__":
    main()
