"""Drive the real `iac-code acp` process with the official ACP client, validating every
message on the wire against the SDK's per-method schemas."""

import asyncio
import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)

from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import ScriptedAnthropic
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.e2e

IAC_CODE = shutil.which("iac-code", path=str(Path(sys.executable).parent)) or "iac-code"


@dataclass
class RecordingClient:
    """The editor side: records updates and answers permission requests from `answers`
    (option ids, or "cancelled"); with no answer left it cancels."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        answer = self.answers.pop(0) if self.answers else "cancelled"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def agent_text(self) -> str:
        return "".join(
            u.content.text for _, u in self.updates if u.session_update == "agent_message_chunk"
        )

    def tool_updates(self, tool_call_id: str) -> list[Any]:
        return [
            u
            for _, u in self.updates
            if u.session_update in ("tool_call", "tool_call_update")
            and u.tool_call_id == tool_call_id
        ]


@dataclass
class Agent:
    conn: Any
    process: Any
    client: RecordingClient
    wire: WireValidator
    raw: list[tuple[str, dict[str, Any]]]
    stderr_path: Path
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL the agent, as a crash would: requests in flight stay unanswered."""
        self.killed = True
        self.process.kill()

    async def initialize(self, capabilities: ClientCapabilities | None = None) -> Any:
        return await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities(),
            client_info=Implementation(name="e2e", version="1"),
        )

    def sent_by_agent(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            m for s, m in self.raw if s == AGENT and (method is None or m.get("method") == method)
        ]

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


Spawn = Callable[..., AbstractAsyncContextManager[Agent]]


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    return {
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
        "IAC_CODE_LOG_LEVEL": "DEBUG",
        "PYTHONUNBUFFERED": "1",
        "IAC_CODE_DEMO_PACE": "0",  # the demo model at once, unless a test wants its pace
    }


@pytest.fixture
def spawn(tmp_path: Path, workdir: Path, base_env: dict[str, str]) -> Spawn:
    runs = iter(range(1000))

    @asynccontextmanager
    async def start(
        env: dict[str, str] | None = None, client: RecordingClient | None = None
    ) -> AsyncIterator[Agent]:
        client = client or RecordingClient()
        wire = WireValidator()
        raw: list[tuple[str, dict[str, Any]]] = []

        def observe(event: StreamEvent) -> None:
            sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
            raw.append((sender, event.message))
            wire.check(sender, json.loads(json.dumps(event.message)))

        stderr_path = tmp_path / f"stderr-{next(runs)}.log"
        with stderr_path.open("wb") as stderr:
            async with spawn_agent_process(
                client,
                IAC_CODE,
                "acp",
                env={**base_env, **(env or {})},
                cwd=workdir,
                transport_kwargs={"stderr": stderr, "limit": 64 * 2**20},
                observers=[observe],
                use_unstable_protocol=True,  # the SDK client gates fork/resume/close
            ) as (conn, process):
                agent = Agent(conn, process, client, wire, raw, stderr_path)
                yield agent
        wire.assert_clean(allow_unanswered=agent.killed)

    return start


DEMO = {"IAC_CODE_PROVIDER": "demo"}


@pytest.fixture
def server() -> Iterator[ScriptedAnthropic]:
    """A scripted Messages API on 127.0.0.1 for the spawned agent to talk to."""
    with ScriptedAnthropic() as server:
        yield server


def anthropic_env(server: ScriptedAnthropic, **extra: str) -> dict[str, str]:
    """The agent on the real anthropic SDK, pointed at the scripted server."""
    return {
        "IAC_CODE_PROVIDER": "anthropic",
        "IAC_CODE_API_KEY": "sk-test-secret",
        "IAC_CODE_BASE_URL": server.base_url,
        "IAC_CODE_MODEL": "claude-test",
        "IAC_CODE_MAX_RETRIES": "0",
        **extra,
    }


async def until(condition: Callable[[], bool], agent: Agent, bound: float = PATIENCE) -> None:
    """Poll a condition the client records (the SDK offers no event for an update)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        assert loop.time() < deadline, f"gave up waiting; agent stderr:\n{agent.stderr()}"
        await asyncio.sleep(0.01)
