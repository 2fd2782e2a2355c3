"""Fakes of MCP: a session's servers and the connector that opens them, as scripted, and the
elicitations the servers make (McpElicitations), answered as scripted."""

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from application.ports.elicitation import Elicitation, ElicitationAnswer
from application.ports.mcp import (
    McpConnector,
    McpElicitations,
    McpPrompt,
    McpPromptError,
    McpServers,
    McpTool,
    StateChanged,
)
from application.ports.tools import (
    ToolResult,
)
from domain.mcp import McpServerSpec, McpServerState, McpStatus


class AnsweringElicitations(McpElicitations):
    def __init__(self, *answers: ElicitationAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[Elicitation] = []
        self.completed: list[str] = []

    async def ask(self, elicitation: Elicitation) -> ElicitationAnswer:
        self.asked.append(elicitation)
        return self.answers.pop(0)

    async def complete(self, elicitation_id: str) -> None:
        self.completed.append(elicitation_id)


@dataclass
class FakeMcpServers(McpServers):
    """One session's MCP servers, as scripted: `tools`/`prompts` are offered once `ready`."""

    specs: tuple[McpServerSpec, ...]
    on_change: StateChanged
    tools_offered: tuple[McpTool, ...] = ()
    prompts_offered: tuple[McpPrompt, ...] = ()
    results: dict[str, ToolResult] = field(default_factory=dict)
    prompt_texts: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    prompt_calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    closed: bool = False
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    elicitations: McpElicitations | None = None  # what the session lent for elicitation
    _states: dict[str, McpServerState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for spec in self.specs:
            self._states[spec.name] = McpServerState(name=spec.name, status=McpStatus.CONNECTING)

    async def settle(self, name: str, status: McpStatus, error: str | None = None) -> None:
        """The test decides when (and how) a server finishes connecting."""
        tools = sum(t.server == name for t in self.tools_offered)
        prompts = sum(p.server == name for p in self.prompts_offered)
        state = McpServerState(name=name, status=status, tools=tools, prompts=prompts, error=error)
        self._states[name] = state
        if all(s.status is not McpStatus.CONNECTING for s in self._states.values()):
            self.connected.set()
        await self.on_change(state)

    def states(self) -> tuple[McpServerState, ...]:
        return tuple(self._states.values())

    async def ready(self) -> None:
        await self.connected.wait()

    def _up(self, server: str) -> bool:
        state = self._states.get(server)  # tools configured for a server not in this set
        return state is not None and state.status is McpStatus.CONNECTED

    def tools(self) -> tuple[McpTool, ...]:
        return tuple(t for t in self.tools_offered if self._up(t.server))

    def prompts(self) -> tuple[McpPrompt, ...]:
        return tuple(p for p in self.prompts_offered if self._up(p.server))

    async def call_tool(
        self, name: str, arguments: Mapping[str, object], *, call_id: str | None = None
    ) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        return self.results.get(name, ToolResult(text=f"{name} done"))

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> str:
        self.prompt_calls.append((name, dict(arguments)))
        if name not in self.prompt_texts:
            raise McpPromptError(f"no prompt {name!r}")
        return self.prompt_texts[name]

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class FakeMcpConnector(McpConnector):
    """Opens FakeMcpServers, configured by `configure` before the session opens them."""

    opened: list[FakeMcpServers] = field(default_factory=list)
    configure: Callable[[FakeMcpServers], None] = lambda servers: None

    def open(
        self,
        servers: Sequence[McpServerSpec],
        *,
        cwd: str,
        on_change: StateChanged,
        elicitations: McpElicitations | None = None,
    ) -> McpServers:
        fake = FakeMcpServers(specs=tuple(servers), on_change=on_change)
        fake.elicitations = elicitations
        self.configure(fake)
        self.opened.append(fake)
        return fake
