"""The real server and the official ACP client the web client benchmark (bench/web.py) drives:
`iac-code acp --transport http` on the demo model, its sign-in link, and a quiet client."""

import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import IAC_CODE

LINK = re.compile(r"web client: open (http://\S+)")
PATIENCE = 120.0


@dataclass
class Server:
    process: "subprocess.Popen[bytes]"
    link: str
    token: str
    stderr: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.link.split("#", 1)[0].rstrip("/")


def _read_stderr(server_lines: list[str], stream: Any) -> None:
    for raw in stream:
        server_lines.append(raw.decode(errors="replace"))


def start_server(root: Path, pace: float) -> Server:
    """The server, once it has printed its sign-in link (forced into the pipe: the link
    holds the token only on a terminal otherwise) and says it is ready."""
    token = f"bench-{uuid.uuid4().hex}"
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(root),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": str(pace),
        "IAC_CODE_DATABASE_URL": f"sqlite+aiosqlite:///{root}/sessions.db",
        "IAC_CODE_LOG_LEVEL": "WARNING",
        "IACCODE_ACP_HTTP_TOKEN": token,
        "IAC_CODE_HTTP_SIGN_IN_LINK": "always",
    }
    argv = [IAC_CODE, "acp", "--transport", "http", "--port", "0"]
    process = subprocess.Popen(
        argv, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    lines: list[str] = []
    threading.Thread(target=_read_stderr, args=(lines, process.stderr), daemon=True).start()
    deadline = time.monotonic() + PATIENCE
    link = None
    while link is None:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("the server did not start:\n" + "".join(lines)[-3000:])
        link = next((m[1] for line in list(lines) if (m := LINK.search(line))), None)
        time.sleep(0.05)
    server = Server(process, link, token, lines)
    while True:
        try:
            if httpx.get(f"{server.base}/readyz", timeout=5).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop(server)
            raise RuntimeError("the server did not become ready")
        time.sleep(0.1)


def stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


class QuietClient:
    """The official client's side: reads updates, allows what the demo asks."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id)
        )


@asynccontextmanager
async def official_client(server: Server) -> AsyncIterator[Any]:
    """An initialised connection of the official ACP client (HTTP + SSE)."""
    from acp import PROTOCOL_VERSION, connect_to_agent
    from acp.http import create_http_stream
    from acp.schema import ClientCapabilities, Implementation

    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(timeout=httpx.Timeout(None), headers=headers) as http:
        transport = create_http_stream(f"{server.base}/acp", client=http)
        conn = connect_to_agent(QuietClient(), transport)
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="bench-web", version="1"),
            )
            yield conn
        finally:
            await conn.close()
            await transport.close()
