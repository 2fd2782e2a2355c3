"""A server's world on disk, and a session's commands confined in it by the real bubblewrap:
the server's home (an ssh key), its configuration (a key) and database, the session's
workspace, another session's workspace, a file outside every workspace."""

import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.workspace.confinement import Confinement, Limits
from adapters.workspace.local import LocalWorkspace
from application.ports.workspace import CommandRun, Workspace
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy
from domain.tool_call import ToolOutput

KEY = "SSH-PRIVATE-KEY-a81f"
API_KEY = "sk-config-secret-77c2"
DATABASE = "SQLITE-ROWS-5be0"
OTHERS = "ANOTHER-SESSIONS-NOTES-90d3"
OUTSIDE = "OUTSIDE-EVERY-WORKSPACE-1c4e"
WRITE = SandboxPolicy(level=SandboxLevel.WORKSPACE_WRITE, network=NetworkLevel.NONE)
READ = SandboxPolicy(level=SandboxLevel.READ_ONLY, network=NetworkLevel.NONE)

Run = Callable[..., Awaitable[CommandRun]]


@dataclass(frozen=True)
class World:
    root: Path
    home: Path
    config: Path
    work: Path  # the session's directory, holding the server's database (a careless setup)
    other: Path  # another session's directory
    outside: Path  # a file in no workspace

    def confinement(self, limits: Limits | None = None, engine: str = "auto") -> Confinement:
        database = self.work / "iac-code.db"
        return Confinement.found(hidden=(self.config, database), limits=limits, engine=engine)


def _unmount_below(root: Path) -> None:
    """Should a failing sandbox have let a command mount something in the test's directory
    (`mount --bind` as root), take it away, innermost first, before pytest deletes it."""
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in sorted((p for p in points if p.startswith(f"{root}/")), reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    if shutil.which("bwrap") is None:  # CI installs it (scripts/ensure-bwrap): never skipped
        pytest.fail("bubblewrap is not installed: run scripts/ensure-bwrap")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    monkeypatch.setenv("HOME", str(home))  # the server's home, as the confinement reads it
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(f'api_key = "{API_KEY}"\n')
    work = tmp_path / "work"
    work.mkdir()
    (work / "iac-code.db").write_text(DATABASE)
    (work / "readme.txt").write_text("the session's own file\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text(OTHERS)
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE)
    yield World(tmp_path, home, config, work, other, outside)
    _unmount_below(tmp_path)


async def quiet(_: str) -> None:
    return None


async def unshown(_: ToolOutput) -> None:
    return None


def runner(
    world: World,
    policy: SandboxPolicy = WRITE,
    limits: Limits | None = None,
    directories: tuple[str, ...] | None = None,
    engine: str = "auto",
) -> Run:
    """Run a command as the session's bash tool would, confined."""
    local = LocalWorkspace(world.confinement(limits, engine))
    workspace: Workspace = local.under(policy, directories or (str(world.work),))

    async def run(command: str, seconds: float = 60.0) -> CommandRun:
        return await run_in(workspace, command, world.work, seconds=seconds)

    return run


async def run_in(
    workspace: Workspace,
    command: str,
    cwd: Path | str,
    *,
    seconds: float = 60.0,
    output_limit: int = 20_000,
) -> CommandRun:
    """`command` in `workspace` as the bash tool runs it, at `cwd`, its output kept whole."""
    return await workspace.run(
        command,
        cwd=str(cwd),
        seconds=seconds,
        output_limit=output_limit,
        chunk=quiet,
        show=unshown,
    )


@pytest.fixture
def run(world: World) -> Run:
    return runner(world)


def unchanged(world: World) -> bool:
    """Nothing outside the workspace was written: the same files with the same contents."""
    found = sorted(
        str(p.relative_to(world.root))
        for p in world.root.rglob("*")
        if not p.is_relative_to(world.work)
    )
    return (
        found
        == [
            "config",
            "config/config.toml",
            "home",
            "home/.ssh",
            "home/.ssh/id_ed25519",
            "other",
            "other/notes.txt",
            "outside.txt",
        ]
        and world.outside.read_text() == OUTSIDE
        and (world.other / "notes.txt").read_text() == OTHERS
        and (world.home / ".ssh" / "id_ed25519").read_text() == KEY
        and os.listdir(world.home / ".ssh") == ["id_ed25519"]
    )
