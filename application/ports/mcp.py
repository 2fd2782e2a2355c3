from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from application.ports.elicitation import Elicitation, ElicitationAnswer
from application.ports.tools import ToolDefinition, ToolResult
from domain.mcp import McpServerSpec, McpServerState


@dataclass(frozen=True, slots=True, kw_only=True)
class McpTool:
    """A tool of one of the session's MCP servers, as offered to the model."""

    definition: ToolDefinition  # named mcp__<server>__<tool>, with the server's JSON schema
    server: str
    title: str  # the tool's title, else its description's first line, else its name


@dataclass(frozen=True, slots=True, kw_only=True)
class McpPromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class McpPrompt:
    """A prompt of one of the session's MCP servers: a slash command /mcp__<server>__<name>."""

    name: str  # qualified, mcp__<server>__<prompt>
    server: str
    description: str
    arguments: tuple[McpPromptArgument, ...] = ()


StateChanged = Callable[[McpServerState], Awaitable[None]]


class McpElicitations(Protocol):
    """How a session's MCP servers ask its user for input (their own elicitation
    requests), forwarded to the session's clients."""

    @abstractmethod
    async def ask(self, elicitation: Elicitation) -> ElicitationAnswer:
        """The user's answer; declined when no client can show it. Never raises."""

    @abstractmethod
    async def complete(self, elicitation_id: str) -> None:
        """The server says a url-mode step it asked for is done."""


class McpServers(Protocol):
    """The MCP servers of one open session.

    - One server failing (not found, crash, timeout, bad handshake) never affects the others;
      every change of a server's state is reported through the `StateChanged` callback given
      when the set was opened.
    - A stdio server that crashed is started again, once, when it is next used.
    - Errors and states never hold the values of `env` or `headers`.
    """

    @abstractmethod
    def states(self) -> tuple[McpServerState, ...]: ...

    @abstractmethod
    async def ready(self) -> None:
        """Until every server has connected or failed (each within the connect timeout)."""

    @abstractmethod
    def tools(self) -> tuple[McpTool, ...]:
        """Tools of the connected servers (none of a server still connecting or failed)."""

    @abstractmethod
    def prompts(self) -> tuple[McpPrompt, ...]: ...

    @abstractmethod
    async def call_tool(
        self, name: str, arguments: Mapping[str, object], *, call_id: str | None = None
    ) -> ToolResult:
        """Call a tool by its qualified name. Failures are error results, not exceptions;
        cancelling the call stops waiting for it. `call_id`: the tool call it runs for (an
        elicitation the server makes meanwhile names it)."""

    @abstractmethod
    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> str:
        """The prompt's messages as one text for the model. Raises McpPromptError."""

    @abstractmethod
    async def aclose(self) -> None:
        """Disconnect every server; stdio servers are stopped with their process group."""


class McpConnector(Protocol):
    @abstractmethod
    def open(
        self,
        servers: Sequence[McpServerSpec],
        *,
        cwd: str,
        on_change: StateChanged,
        elicitations: McpElicitations | None = None,
    ) -> McpServers:
        """Start connecting every server concurrently; returns at once. With
        `elicitations`, the servers may ask the user for input (MCP elicitation)."""


class McpPromptError(Exception):
    """A prompt that could not be fetched (unknown, bad arguments, server failed)."""
