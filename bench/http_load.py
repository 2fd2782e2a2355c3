"""HTTP + SSE load benchmark: N concurrent connections, each initialize -> session/new -> one
prompt whose scripted model reply streams ~2,000 characters, then DELETE.

Run by hand (not in CI):  .venv/bin/python bench/http_load.py [--connections 50] [--lockstep]

Three processes: this one (the clients), the server (`iac-code acp --transport http` through
its CLI entry point, provider anthropic) and the scripted Anthropic API
(tests/support/scripted_anthropic.py, its HTTP side in anthropic_handler.py) in a child
process. Every text piece the model sends carries a placeholder that the scripted server
overwrites with `time.monotonic_ns()` just
before writing it to its socket (one clock for all processes on Linux). Two latencies:

* server: model socket write -> the SSE chunk carrying that piece has been written by the
  server. This is the server-added latency, plus one loopback hop. The server runs through
  its CLI entry point with two wrappers: around Outbox.append (when the agent core hands the
  piece to the transport) and Outbox._follow (when the chunk's send has completed), which
  split it into the share of the model client + agent core and that of this transport.
* end to end: model socket write -> the client received the network chunk holding the
  event (stamped on arrival, before parsing): adds the second hop and the client's delays.

Checks per connection: every piece arrives exactly once and in order, event ids have no gap
and no repeat, and the prompt ends with end_turn.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLACEHOLDER = "#" * 19
STAMP = re.compile(r"\[(\d{3})\|(\d{19})\]")


def pieces(count: int) -> list[str]:
    return [f"[{n:03d}|{PLACEHOLDER}]" for n in range(count)]  # 25 characters each


# -- the scripted model ---------------------------------------------------------------------


def run_model(args: argparse.Namespace, ports: Any, stop: Any) -> None:
    """The scripted Anthropic API, stamping each piece with the time it is written."""
    from tests.support import anthropic_handler as handler
    from tests.support import scripted_anthropic as scripted

    write = handler._Handler._write_chunk
    marker = PLACEHOLDER.encode()

    def stamped(self: Any, data: bytes) -> None:
        if marker in data:
            data = data.replace(marker, b"%019d" % time.monotonic_ns())
        write(self, data)

    handler._Handler._write_chunk = stamped  # type: ignore[method-assign]
    handler.ScriptHTTPServer.request_queue_size = 256  # all connections at once: no SYN drops
    n = args.connections
    # Unless --lockstep, each stream has its own pace (delay +-10 %), as real ones do: 50
    # streams ticking in phase turn every tick into a burst of 50 chunks at once.
    spread = [0.0] * n if args.lockstep else [0.2 * i / max(1, n - 1) - 0.1 for i in range(n)]
    replies = [
        scripted.stream(scripted.text(*pieces(args.pieces)), delay=args.delay * (1 + s))
        for s in spread
    ]
    with scripted.ScriptedAnthropic(*replies) as server:
        ports.put(server.port)
        stop.wait()


# -- the server, instrumented ---------------------------------------------------------------


def serve_instrumented(port: int, samples_path: Path) -> int:
    """`iac-code acp --transport http`, recording for each stamped piece when the agent core
    handed it to the transport (Outbox.append) and when its SSE chunk was written."""
    from adapters.http.outbox import Outbox
    from bootstrap.cli import main

    append, follow = Outbox.append, Outbox._follow
    appended: dict[str, int] = {}
    samples: list[tuple[int, int, int]] = []  # (model write, appended, written)

    def timed_append(self: Outbox, message: dict[str, Any]) -> None:
        append(self, message)
        content = message.get("params", {}).get("update", {}).get("content")
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            for _, sent in STAMP.findall(content["text"]):
                appended[sent] = time.monotonic_ns()

    async def timed_follow(self: Outbox, token: object, cursor: int) -> AsyncIterator[bytes]:
        async for chunk in follow(self, token, cursor):
            yield chunk
            written = time.monotonic_ns()  # resumed: the server has written `chunk`
            for _, sent in STAMP.findall(chunk.decode()):
                samples.append((int(sent), appended.pop(sent), written))

    Outbox.append = timed_append  # type: ignore[method-assign]
    Outbox._follow = timed_follow  # type: ignore[method-assign]
    try:
        return main(["acp", "--transport", "http", "--port", str(port)])
    except KeyboardInterrupt:  # how the benchmark stops it: uvicorn re-raises SIGINT
        return 0
    finally:
        samples_path.write_text(json.dumps(samples))


@contextmanager
def http_server(model_url: str, home: Path, samples: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(home),
        "IAC_CODE_PROVIDER": "anthropic",
        "IAC_CODE_API_KEY": "bench-dummy-key",
        "IAC_CODE_BASE_URL": model_url,
        "IAC_CODE_MODEL": "claude-scripted",
        "IAC_CODE_MAX_RETRIES": "0",
        "IAC_CODE_LOG_LEVEL": "INFO",
        "NO_PROXY": "127.0.0.1",
    }
    command = [sys.executable, __file__, "--serve", str(port), str(samples)]
    with (home / "server.log").open("wb") as log:
        server = subprocess.Popen(command, env=env, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, server)
        yield base
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit("the server exited")
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit("the server did not come up")


# -- the clients ----------------------------------------------------------------------------


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    latencies_ns: list[int] = field(default_factory=list)
    events: int = 0


class EventReader:
    """SSE events of one stream, each with the arrival time of the chunk that completed it."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.aiter_raw()
        self._buffer = b""
        self._ready: list[tuple[int, bytes]] = []

    async def next(self) -> tuple[int, dict[str, str]]:
        while not self._ready:
            chunk = await anext(self._chunks)
            arrived = time.monotonic_ns()
            self._buffer += chunk
            *complete, self._buffer = self._buffer.split(b"\n\n")
            self._ready.extend((arrived, block) for block in complete)
        arrived, block = self._ready.pop(0)
        fields: dict[str, str] = {}
        for line in block.decode().split("\n"):
            if line and not line.startswith(":"):
                key, _, value = line.partition(": ")
                fields[key] = value
        return arrived, fields


class Client:
    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.headers: dict[str, str] = {}
        self.outcome = Outcome()
        self.ids: list[int] = []
        self.text: list[str] = []

    async def post(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        response = await self.http.post(self.url, json=message, headers=self.headers)
        if method == "initialize":
            self.headers["Acp-Connection-Id"] = response.headers["acp-connection-id"]

    async def until_response(self, reader: EventReader, request_id: int) -> dict[str, Any]:
        while True:
            arrived, fields = await reader.next()
            if "data" not in fields:
                continue
            self.ids.append(int(fields["id"]))
            message = json.loads(fields["data"])
            update = message.get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "agent_message_chunk":
                chunk = update["content"]["text"]
                self.text.append(chunk)
                self.outcome.latencies_ns += [arrived - int(s) for _, s in STAMP.findall(chunk)]
            if message.get("id") == request_id and "method" not in message:
                return message

    async def run(self, cwd: str, count: int) -> Outcome:
        await self.post(0, "initialize", {"protocolVersion": 1})
        async with self.http.stream("GET", self.url, headers=self.headers) as sse:
            reader = EventReader(sse)
            await self.post(1, "session/new", {"cwd": cwd, "mcpServers": []})
            session_id = (await self.until_response(reader, 1))["result"]["sessionId"]
            prompt = [{"type": "text", "text": "go"}]
            await self.post(2, "session/prompt", {"sessionId": session_id, "prompt": prompt})
            final = await self.until_response(reader, 2)
        await self.http.delete(self.url, headers=self.headers)
        self.check(final, count)
        return self.outcome

    def check(self, final: dict[str, Any], count: int) -> None:
        self.outcome.events = len(self.ids)
        order = [int(n) for n, _ in STAMP.findall("".join(self.text))]
        if order != list(range(count)):
            self.outcome.problems.append(f"pieces arrived as {order[:5]}... ({len(order)})")
        if self.ids != list(range(self.ids[0], self.ids[0] + len(self.ids))):
            self.outcome.problems.append("event ids have a gap or a repeat")
        if final.get("result", {}).get("stopReason") != "end_turn":
            self.outcome.problems.append(f"prompt ended with {final}")


async def load(args: argparse.Namespace, base: str, workdir: Path) -> tuple[list[Any], float]:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60), limits=limits) as http:
        started = time.perf_counter()
        outcomes = await asyncio.gather(
            *(
                Client(http, f"{base}/acp").run(str(workdir), args.pieces)
                for _ in range(args.connections)
            ),
            return_exceptions=True,
        )
        return outcomes, time.perf_counter() - started


# -- the report -----------------------------------------------------------------------------


def summary(name: str, values_ns: list[int]) -> str:
    ordered = sorted(values_ns)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))] / 1e6

    return (
        f"{name}: p50 {at(0.5):.2f} ms  p90 {at(0.9):.2f}  p99 {at(0.99):.2f}  "
        f"max {ordered[-1] / 1e6:.2f}  (n={len(ordered)})"
    )


def report(
    args: argparse.Namespace, outcomes: list[Any], wall: float, server: list[list[int]]
) -> bool:
    done = [o for o in outcomes if isinstance(o, Outcome)]
    failed = [o for o in outcomes if not isinstance(o, Outcome)]
    bad = [o for o in done if o.problems]
    client = [v for o in done for v in o.latencies_ns]
    expected = args.connections * args.pieces
    pace = "in lockstep" if args.lockstep else "each at its own pace (+-10 %)"
    print(
        f"{args.connections} connections, {args.pieces * 25} characters per reply in "
        f"{args.pieces} pieces, {args.delay * 1000:g} ms apart, {pace}"
    )
    print(
        f"completed {len(done) - len(bad)}/{args.connections} in {wall:.2f} s; errors "
        f"{len(failed)}; lost, duplicated or out of order: {len(bad)}; SSE events "
        f"{sum(o.events for o in done)}"
    )
    for problem in [*failed[:3], *[p for o in bad[:3] for p in o.problems]]:
        print(f"  problem: {problem!r}")
    if server:
        print(summary("server (model write -> SSE chunk written)", [w - m for m, _, w in server]))
        print(summary("  of which model client + agent core", [a - m for m, a, _ in server]))
        print(
            summary("  of which this transport (outbox -> written)", [w - a for _, a, w in server])
        )
    if client:
        print(summary("end to end (model write -> client receipt)", client))
        print(f"mean end to end {statistics.fmean(client) / 1e6:.2f} ms")
    return not failed and not bad and len(client) == len(server) == expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--pieces", type=int, default=80, help="25 characters each")
    parser.add_argument("--delay", type=float, default=0.05, help="seconds between pieces")
    parser.add_argument("--lockstep", action="store_true", help="all streams at one pace")
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "SAMPLES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve_instrumented(int(args.serve[0]), Path(args.serve[1]))
    context = multiprocessing.get_context("spawn")
    ports, stop = context.Queue(), context.Event()
    model = context.Process(target=run_model, args=(args, ports, stop))
    model.start()
    try:
        model_url = f"http://127.0.0.1:{ports.get(timeout=30)}"
        with tempfile.TemporaryDirectory() as tmp:
            workdir, samples = Path(tmp) / "work", Path(tmp) / "samples.json"
            workdir.mkdir()
            with http_server(model_url, Path(tmp), samples) as base:
                outcomes, wall = asyncio.run(load(args, base, workdir))
            ok = report(args, outcomes, wall, json.loads(samples.read_text()))
    finally:
        stop.set()
        model.join(10)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
