"""What `initialize` tells a client about this server. A module of its own, not in
application/dto.py: `initialize` is answered before the agent loads, and dto.py's other
answers bring the session, config and MCP models with them (~5 ms on that path)."""

from dataclasses import dataclass

from domain.sandbox import SandboxRules


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
    images: bool = True
    sandbox: SandboxRules | None = (
        None  # what the agent's commands run in  # the session's default model reads images
    )
