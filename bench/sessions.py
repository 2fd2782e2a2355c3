"""Session store benchmark, through the real server over stdio.

Run by hand (not in CI):  .venv/bin/python bench/sessions.py [--sessions 10000]
Seeds a database with N sessions (200 of them in one cwd) plus a 1,000-message session
(half of its messages tool calls), then measures, request to response, on the server:
session/list (first page), session/load of the big session (replay included),
session/fork of the big and of a one-message session, and the server's RSS.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, insert

from adapters.persistence import tables
from adapters.persistence.mappers import message_to_row, session_to_row, tool_call_to_row
from adapters.persistence.migrate import upgrade_to_head
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId, SessionId, ToolCallId
from domain.message import Message, Role
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolKind

IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def big_history(n_rounds: int = 250) -> tuple[list[Message], list[ToolCallRecord]]:
    messages: list[Message] = []
    records: list[ToolCallRecord] = []

    def add(role: Role, *blocks: object) -> None:
        messages.append(
            Message(
                id=MessageId(f"m{len(messages)}"),
                role=role,
                content=tuple(blocks),  # type: ignore[arg-type]
                created_at=T0 + timedelta(seconds=len(messages)),
            )
        )

    for r in range(n_rounds):
        add(Role.USER, TextBlock(text=f"Question {r}: what does module {r} do?"))
        add(
            Role.ASSISTANT,
            TextBlock(text=f"Let me read module {r}."),
            ToolUseBlock(id=f"toolu_{r}", name="read_file", input={"path": f"m{r}.py"}),
        )
        add(Role.USER, ToolResultBlock(tool_use_id=f"toolu_{r}", content="x = 1\n" * 20))
        add(Role.ASSISTANT, TextBlock(text=f"Module {r} sets x to 1. " * 5))
        records.append(
            ToolCallRecord(
                id=ToolCallId(f"toolu_{r}"),
                name="read_file",
                title=f"Read m{r}.py",
                kind=ToolKind.READ,
                arguments={"path": f"m{r}.py"},
                status=ToolCallStatus.COMPLETED,
                output=(TextOutput(text="x = 1\n" * 20),),
            )
        )
    return messages, records


def seed(url: str, n_sessions: int, shared_cwd: str, other_cwd: str) -> dict[str, str]:
    upgrade_to_head(url)
    engine = create_engine(url.replace("+aiosqlite", ""))
    sessions, messages = [], []
    for i in range(n_sessions):
        cwd = shared_cwd if i < 200 else f"{other_cwd}/p{i % 977}"
        s = Session(
            id=SessionId(f"sess_{i:06d}"),
            cwd=cwd,
            created_at=T0,
            model="demo",
            title=f"Session {i}",
            updated_at=T0 + timedelta(seconds=i),
        )
        message = Message(
            id=MessageId(f"m_{i}"),
            role=Role.USER,
            content=(TextBlock(text=f"hello {i}"),),
            created_at=s.updated_at,
        )
        s.add_message(message)
        sessions.append(session_to_row(s))
        messages.append(message_to_row(s.id, 0, message))
    history, records = big_history()
    big = Session(
        id=SessionId("sess_big"),
        cwd=shared_cwd,
        created_at=T0,
        model="demo",
        title="Big",
        messages=history,
    )
    small = Session(
        id=SessionId("sess_small"),
        cwd=shared_cwd,
        created_at=T0,
        model="demo",
        title="Small",
        messages=history[:1],
    )
    with engine.begin() as db:
        db.execute(insert(tables.sessions), [*sessions, session_to_row(big), session_to_row(small)])
        db.execute(
            insert(tables.messages),
            [
                *messages,
                *(message_to_row(big.id, i, m) for i, m in enumerate(history)),
                message_to_row(small.id, 0, history[0]),
            ],
        )
        db.execute(insert(tables.tool_calls), [tool_call_to_row(big.id, r) for r in records])
    engine.dispose()
    return {"big": big.id, "small": small.id}


class Server:
    def __init__(self, home: Path, cwd: Path) -> None:
        env = {
            **os.environ,
            "IAC_CODE_CONFIG_DIR": str(home),
            "IAC_CODE_PROVIDER": "demo",
            "IAC_CODE_LOG_LEVEL": "WARNING",
        }
        self.process = subprocess.Popen(
            [IAC_CODE, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.ids = iter(range(10**9))
        self.call("initialize", {"protocolVersion": 1})
        self.call("session/list", {})  # waits for the background start-up: not measured

    def call(self, method: str, params: dict) -> tuple[float, dict]:
        """Seconds from sending the request to reading its response (updates skipped)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        request_id = next(self.ids)
        line = (
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        start = time.perf_counter()
        self.process.stdin.write(line)
        self.process.stdin.flush()
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == request_id and "method" not in reply:
                elapsed = time.perf_counter() - start
                assert "result" in reply, reply
                return elapsed, reply["result"]

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(line for line in status.splitlines() if line.startswith("VmRSS"))
        return int(kib.split()[1]) / 1024

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def timed(server: Server, runs: int, method: str, params: dict) -> list[float]:
    return [server.call(method, params)[0] * 1000 for _ in range(runs)]


def report(label: str, values: list[float]) -> None:
    values = sorted(values)
    print(
        f"  {label:42} median {statistics.median(values):7.1f} ms   "
        f"worst {values[-1]:7.1f} ms   ({len(values)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp, "shared")
        shared.mkdir()
        for n, label in ((args.sessions, "large"), (100, "small")):
            home = Path(tmp, f"home-{label}")
            url = f"sqlite+aiosqlite:///{home / 'iac-code.db'}"
            started = time.perf_counter()
            ids = seed(url, n, str(shared), str(Path(tmp, "other")))
            print(
                f"\n{n} stored sessions (+ a 1,000-message one), seeded in "
                f"{time.perf_counter() - started:.1f} s"
            )
            server = Server(home, shared)
            cwd = str(shared)
            report(
                "session/list cwd (200 match), first page",
                timed(server, 30, "session/list", {"cwd": cwd}),
            )
            report("session/list, all sessions, first page", timed(server, 30, "session/list", {}))
            report(
                "session/load 1,000 messages, until response",
                timed(
                    server,
                    5,
                    "session/load",
                    {"sessionId": ids["big"], "cwd": cwd, "mcpServers": []},
                ),
            )
            report(
                "session/fork of the 1,000-message session",
                timed(
                    server,
                    20,
                    "session/fork",
                    {"sessionId": ids["big"], "cwd": cwd, "mcpServers": []},
                ),
            )
            report(
                "session/fork of a one-message session",
                timed(
                    server,
                    20,
                    "session/fork",
                    {"sessionId": ids["small"], "cwd": cwd, "mcpServers": []},
                ),
            )
            print(f"  server RSS after the above: {server.rss_mib():.1f} MiB")
            server.close()


if __name__ == "__main__":
    main()
