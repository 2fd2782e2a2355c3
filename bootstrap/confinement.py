"""This server's confinement of the agent's commands, from the settings."""

from pathlib import Path

from adapters.workspace.confinement import Confinement, Limits
from adapters.workspace.egress import AllowList
from bootstrap.settings import Settings


def sqlite_path(database_url: str) -> Path | None:
    """The file of an embedded database (`sqlite+aiosqlite:///PATH`); None for a server."""
    prefix, _, path = database_url.partition(":///")
    return Path(path) if prefix.startswith("sqlite") and path else None


def hidden_paths(settings: Settings) -> tuple[Path, ...]:
    """The server's own files, never shown to a command (even inside a session's directory):
    its configuration (the keys in config.toml), its database (with its journal files)."""
    paths = [settings.config_dir]
    database = sqlite_path(settings.database_url)
    if database is not None:
        paths += [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
    return tuple(paths)


def build_confinement(settings: Settings) -> Confinement:
    return Confinement.found(
        hidden=hidden_paths(settings),
        limits=Limits(
            max_file_bytes=settings.sandbox_max_file_bytes,
            max_processes=settings.sandbox_max_processes,
        ),
        engine=settings.sandbox_engine,
    )


def egress_allow_list(settings: Settings) -> AllowList:
    """IAC_CODE_SANDBOX_ALLOW, with the ports this server listens on refused whatever it
    lists (IAC_CODE_HTTP_PORT's, when serving HTTP: read where the HTTP server is set up)."""
    return AllowList(settings.sandbox_allow, own_ports=settings.own_ports)
