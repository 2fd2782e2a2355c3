"""Where a session works, as the editor last opened it."""

from dataclasses import dataclass
from posixpath import isabs

from domain.client_prompt import ClientPrompt
from domain.errors import InvalidWorkingDirectory


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """A session's working directory and what the client opened it with: the extra
    directories inside the session, its MCP servers as stored (McpServerSpec.stored(): no
    secret values) and its system prompt (None: the agent's own instructions)."""

    cwd: str
    additional_directories: tuple[str, ...] = ()
    mcp_servers: tuple[dict[str, object], ...] = ()
    system_prompt: ClientPrompt | None = None

    def __post_init__(self) -> None:
        if not isabs(self.cwd):
            raise InvalidWorkingDirectory(
                f"cwd must be an absolute path, got {self.cwd!r}.", cwd=self.cwd
            )
        for directory in self.additional_directories:
            if not isabs(directory):
                raise InvalidWorkingDirectory(
                    f"additional directories must be absolute paths, got {directory!r}.",
                    cwd=directory,
                )

    @property
    def roots(self) -> tuple[str, ...]:
        """Every directory the session works in: cwd first, then the extra ones."""
        return (self.cwd, *self.additional_directories)
