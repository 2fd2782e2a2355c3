"""Issue 44's escape attempts, each a real command under the real bubblewrap, as a session's
bash tool runs it (workspace-write, no network, unless a test says otherwise). Each asserts
what the command could not do, on the disk and in its output, and what the tool result
tells the model; a command that could do it would fail the test."""

import asyncio
import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from adapters.workspace.confinement import Confinement, Limits
from adapters.workspace.local import LocalWorkspace
from tests.integration.sandbox.conftest import (
    API_KEY,
    DATABASE,
    KEY,
    OTHERS,
    READ,
    WRITE,
    Run,
    World,
    run_in,
    runner,
    unchanged,
)
from tests.support.processes import survivors

pytestmark = pytest.mark.integration


def exists(path: str) -> bool:
    return Path(path).exists()


@pytest.fixture
def planted() -> Iterator[str]:
    """A name no system file has; removed after the test should a failing sandbox have let
    a command write it (the machine is shared: a failure must leave nothing behind)."""
    name = f"iac-planted-{uuid.uuid4().hex[:12]}"
    yield name
    for top in ("/usr", "/etc", ""):
        Path(f"{top}/{name}").unlink(missing_ok=True)


# --- what is not there to read ------------------------------------------------------------


async def test_the_servers_ssh_key_and_config_are_not_there_to_read(world: World, run: Run) -> None:
    ran = await run(
        f"cat ~/.ssh/id_ed25519 {world.home}/.ssh/id_ed25519 {world.config}/config.toml; "
        "ls -a ~; echo home=$HOME"
    )
    assert KEY not in ran.output and API_KEY not in ran.output
    assert "No such file or directory" in ran.output
    assert f"home={world.home}" in ran.output  # an empty home at the same path
    assert unchanged(world)


async def test_the_servers_database_in_the_workspace_is_covered(world: World, run: Run) -> None:
    ran = await run("cat iac-code.db; echo; cat readme.txt")
    assert DATABASE not in ran.output
    assert "the session's own file" in ran.output  # the rest of the workspace is there
    assert ran.exit_code == 0


async def test_another_sessions_workspace_is_neither_read_nor_written(
    world: World, run: Run
) -> None:
    ran = await run(
        f"cat {world.other}/notes.txt; echo planted > {world.other}/planted; ls {world.root}"
    )
    assert OTHERS not in ran.output
    assert not (world.other / "planted").exists()
    assert unchanged(world)


# --- what is not there to write -----------------------------------------------------------


@pytest.mark.parametrize(
    "attempt",
    [
        "echo x > ../outside.txt",
        "echo x > {outside}",
        "ln -s {outside} link && echo x > link",
        "ln -s .. up && echo x > up/outside.txt",
        "ln {outside} hard && echo x > hard",
        "echo x > /proc/self/root{outside}",
        "echo x > /proc/1/root{outside}",
        "mkdir -p m && mount --bind {root} m && echo x > m/outside.txt",
        "echo x > /usr/{planted}; echo x > /etc/{planted}; echo x > /{planted}",
    ],
    ids=[
        *("dotdot", "absolute", "symlink", "dir-symlink", "hardlink"),
        *("proc-self", "proc-1", "bind", "system"),
    ],
)
async def test_nothing_outside_the_workspace_is_written(
    world: World, run: Run, attempt: str, planted: str
) -> None:
    ran = await run(attempt.format(outside=world.outside, root=world.root, planted=planted))
    assert ran.exit_code != 0
    assert unchanged(world)
    assert not any(exists(f"{top}/{planted}") for top in ("/usr", "/etc", ""))


async def test_a_write_outside_says_the_sandbox_blocked_it(
    world: World, run: Run, planted: str
) -> None:
    ran = await run(f"echo x > /usr/{planted}")
    assert ran.note is not None
    assert "a write outside what the sandbox allows" in ran.note
    assert str(world.work) in ran.note


async def test_private_tmp_is_the_commands_own(world: World, run: Run) -> None:
    name = f"iac-sandbox-{uuid.uuid4().hex}"
    ran = await run(f"echo inside > /tmp/{name} && cat /tmp/{name}")
    assert ran.output.strip() == "inside"
    assert not exists(f"/tmp/{name}")


async def test_read_only_writes_nothing_not_even_the_workspace(world: World) -> None:
    run = runner(world, READ)
    ran = await run("echo x > new.txt; echo y >> readme.txt; cat readme.txt")
    assert not (world.work / "new.txt").exists()
    assert (world.work / "readme.txt").read_text() == "the session's own file\n"
    assert ran.note is not None and "read-only" in ran.note


async def test_workspace_write_writes_the_workspace(world: World, run: Run) -> None:
    ran = await run("echo made > made.txt && mkdir -p a/b && echo deep > a/b/c.txt")
    assert ran.exit_code == 0
    assert (world.work / "made.txt").read_text() == "made\n"
    assert (world.work / "a" / "b" / "c.txt").read_text() == "deep\n"


# --- the network --------------------------------------------------------------------------


@contextmanager
def listening(host: str) -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind((host, 0))
        server.listen()
        server.setblocking(False)
        yield server


def accepted(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
async def test_no_loopback_listener_is_reached_not_even_the_servers(
    world: World, run: Run, host: str
) -> None:
    with listening(host) as server:
        port = server.getsockname()[1]
        ran = await run(f"exec 3<>/dev/tcp/{host}/{port} && echo connected")
        assert "connected" not in ran.output
        assert not accepted(server)
    assert ran.note is not None and "network access" in ran.note


async def test_no_name_is_resolved(world: World, run: Run) -> None:
    ran = await run("getent ahosts pypi.org || echo unresolved")
    assert "unresolved" in ran.output
    assert "STREAM" not in ran.output


# --- processes and system calls ----------------------------------------------------------


async def test_the_server_is_not_there_to_signal_or_trace(world: World, run: Run) -> None:
    server = os.getpid()
    ran = await run(
        f"kill -0 {server} && echo signalled; "
        "ls /proc | grep -c '^[0-9]' ; "
        f"/usr/bin/python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        f'print("ptrace", l.ptrace(16, {server}, 0, 0), ctypes.get_errno())\''
    )
    assert "signalled" not in ran.output
    assert "No such process" in ran.output
    count = int(ran.output.split("\n")[1])
    assert count < 10  # the sandbox's own few processes, not the machine's
    assert "ptrace -1 1" in ran.output  # EPERM: refused by the filter, whatever the target


@pytest.mark.parametrize(
    "call", ["unshare -U true", "unshare -m true", "unshare -n true", "mount -t tmpfs x /mnt"]
)
async def test_namespaces_and_mounts_are_refused(world: World, run: Run, call: str) -> None:
    ran = await run(f"{call} && echo escaped")
    assert "escaped" not in ran.output
    assert ran.exit_code != 0


async def test_nothing_a_command_leaves_behind_outlives_it(world: World, run: Run) -> None:
    marker = f"iac-sandbox-{uuid.uuid4().hex[:12]}"
    ran = await run(
        f"setsid bash -c 'exec -a {marker}-setsid sleep 1000' & "
        f"( exec -a {marker}-double-fork sleep 1000 & ) & "
        f"nohup bash -c 'exec -a {marker}-nohup sleep 1000' >/dev/null 2>&1 & "
        f"until [ \"$(pgrep -cf '^{marker}-')\" = 3 ]; do sleep 0.05; done; echo all-started"
    )
    assert "all-started" in ran.output
    assert survivors(marker) == []


async def test_a_huge_file_is_ended_by_the_file_size_limit(world: World) -> None:
    run = runner(world, limits=Limits(max_file_bytes=2**20))
    # 64 MiB asked for, 1 MiB allowed: a limit that failed would still end the write.
    ran = await run("head -c 64M /dev/zero > big.bin; echo status=$?")
    assert (world.work / "big.bin").stat().st_size == 2**20
    assert "status=153" in ran.output  # 128 + SIGXFSZ
    assert ran.note is not None and "file-size limit" in ran.note


async def test_the_sandbox_takes_every_command_its_own_way(world: World, run: Run) -> None:
    """Several at once: each its own namespaces, none sees another's /tmp."""
    names = [uuid.uuid4().hex for _ in range(4)]
    runs = await asyncio.gather(
        *(run(f"echo {n} > /tmp/mine; sleep 0.2; cat /tmp/mine") for n in names)
    )
    for name, ran in zip(names, runs, strict=True):
        assert ran.output.split() == [name]


async def test_the_servers_directory_inside_the_workspace_is_covered_whole(
    world: World,
) -> None:
    """A session working in the server's home, where the configuration directory (and the
    database in it) live: the directory is an empty, read-only one."""
    config = world.work / ".iac-code"
    config.mkdir()
    (config / "config.toml").write_text(f'api_key = "{API_KEY}"\n')
    (config / "iac-code.db").write_text(DATABASE)
    local = LocalWorkspace(
        Confinement.found(hidden=(config, config / "iac-code.db", config / "iac-code.db-wal"))
    )
    workspace = local.under(WRITE, (str(world.work),))
    ran = await run_in(
        workspace,
        "ls -A .iac-code | wc -l; cat .iac-code/*; echo x > .iac-code/planted",
        world.work,
        seconds=30,
        output_limit=5_000,
    )
    assert ran.output.split("\n")[0] == "0"
    assert API_KEY not in ran.output and DATABASE not in ran.output
    assert sorted(p.name for p in config.iterdir()) == ["config.toml", "iac-code.db"]


@pytest.fixture
def in_tmp() -> Iterator[Path]:
    work = Path(f"/tmp/iac-sandbox-work-{uuid.uuid4().hex[:12]}")
    work.mkdir()
    yield work
    shutil.rmtree(work)


async def test_a_workspace_right_in_tmp_is_written(world: World, in_tmp: Path) -> None:
    """Found by bench/sandbox.py: a session directory directly in /tmp was read-only."""
    workspace = LocalWorkspace(world.confinement()).under(WRITE, (str(in_tmp),))
    ran = await run_in(
        workspace, "echo ok > made.txt && cat made.txt", in_tmp, seconds=30, output_limit=5_000
    )
    assert ran.output == "ok\n"
    assert exists(f"{in_tmp}/made.txt")
