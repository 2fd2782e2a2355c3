"""MCP servers as a session knows them: what the client gave, what is kept, how tools are named.

The client sends its MCP servers with every session/new, load, resume and fork. Their `env`
values and `headers` values may hold credentials: they live in memory for as long as the
session is open, and only their names are stored (`McpServerSpec.stored`).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

PREFIX = "mcp__"
SEPARATOR = "__"
NAME_LIMIT = 64  # the longest tool name the providers accept
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpTransport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"  # streamable HTTP
    SSE = "sse"


class McpStatus(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerSpec:
    name: str
    transport: McpTransport
    command: str = ""  # stdio
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # values may be secret
    url: str = ""  # http and sse
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # values may be secret

    def stored(self) -> dict[str, object]:
        """What the session keeps: everything but the values of env and headers."""
        kept: dict[str, object] = {"name": self.name, "type": self.transport.value}
        if self.transport is McpTransport.STDIO:
            kept |= {"command": self.command, "args": list(self.args), "env": sorted(self.env)}
        else:
            kept |= {"url": self.url, "headers": sorted(self.headers)}
        return kept


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerState:
    """How one server of a session is doing, as the client is shown it."""

    name: str
    status: McpStatus
    tools: int = 0
    prompts: int = 0
    error: str | None = None  # why it failed; never holds env or header values


def safe_name(name: str) -> str:
    """A server, tool or prompt name as it may appear in a tool name: [A-Za-z0-9_-]."""
    return _UNSAFE.sub("_", name) or "_"


def qualified_name(server: str, name: str) -> str:
    """`mcp__<server>__<tool>`, kept within the providers' limit on tool names."""
    return f"{PREFIX}{safe_name(server)}{SEPARATOR}{safe_name(name)}"[:NAME_LIMIT]


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX)
