from dataclasses import dataclass

from domain.client_prompt import ClientPrompt
from domain.config import SelectOption
from domain.mcp import McpServerSpec
from domain.modes import Mode
from domain.stop_reason import StopReason
from domain.usage import Usage
from domain.worktree import Worktree


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What the client is told about a session it opened: its modes and options."""

    session_id: str
    current_mode_id: str
    modes: tuple[Mode, ...]
    options: tuple[SelectOption, ...]
    worktree: Worktree | None = None  # the session's own worktree, for a new or forked one


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOpening:
    """What a client opens a session with (session/new, load, resume, fork): the complete
    lists of its extra directories (absolute, existing) and its MCP servers, and its system
    prompt (None: it gave none, and the session keeps the one it has)."""

    additional_directories: tuple[str, ...] = ()
    mcp_servers: tuple[McpServerSpec, ...] = ()
    system_prompt: ClientPrompt | None = None


NOTHING_MORE = SessionOpening()  # no extra directories, no MCP servers


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptResult:
    stop_reason: StopReason
    usage: Usage
