from dataclasses import dataclass

from domain.client_prompt import ClientPrompt
from domain.config import SelectOption
from domain.mcp import McpServerSpec
from domain.modes import Mode
from domain.stop_reason import StopReason
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What the client is told about a session it opened: its modes and options."""

    session_id: str
    current_mode_id: str
    modes: tuple[Mode, ...]
    options: tuple[SelectOption, ...]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerInfo:
    protocol_version: int
    name: str
    title: str
    version: str
    # The selected provider takes a key (not a local server, not the demo): sign-in methods
    # are offered, whether a key is configured yet or not.
    takes_key: bool
    provider_name: str = "the model provider"
    key_variable: str = "IAC_CODE_API_KEY"  # where the server reads the key
    key_link: str | None = None  # where a user gets one
    images: bool = True  # the session's default model reads images
