"""The fallback where bubblewrap cannot run, forced (`engine="landlock"`, and a machine with
no bwrap at all): Landlock and the seccomp filter stop the same file escapes, TCP, signals
to the server, namespaces and oversized files; and with neither, nothing runs."""

import os
import uuid

import pytest

from adapters.workspace.confinement import Confinement, Engine, Limits
from adapters.workspace.local import LocalWorkspace
from application.ports.workspace import WorkspaceError
from tests.integration.sandbox.conftest import (
    API_KEY,
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
from tests.integration.sandbox.test_escapes import accepted, exists, listening, planted
from tests.support.processes import survivors

pytestmark = pytest.mark.integration

__all__ = ["planted"]  # the fixture, used by name


@pytest.fixture
def run(world: World) -> Run:
    return runner(world, engine="landlock")


def test_without_bwrap_the_machine_falls_back_to_landlock() -> None:
    assert Confinement(bwrap=None).engine is Engine.LANDLOCK
    assert Confinement(bwrap=None).problem is None


def test_with_neither_nothing_can_confine_and_it_says_why() -> None:
    nothing = Confinement(bwrap=None, engine="bubblewrap")
    assert nothing.engine is None
    assert nothing.problem is not None and "bubblewrap (bwrap) is not installed" in nothing.problem


async def test_with_neither_a_confined_command_does_not_run(world: World) -> None:
    local = LocalWorkspace(Confinement(bwrap=None, engine="bubblewrap"))
    workspace = local.under(WRITE, (str(world.work),))
    with pytest.raises(WorkspaceError, match="the command did not run"):
        await run_in(
            workspace, f"echo x > {world.outside}", world.work, seconds=30, output_limit=5_000
        )
    assert unchanged(world)


async def test_the_home_the_config_and_other_workspaces_are_not_read(
    world: World, run: Run
) -> None:
    ran = await run(
        f"cat {world.home}/.ssh/id_ed25519 {world.config}/config.toml {world.other}/notes.txt; "
        "echo home=$HOME"
    )
    assert KEY not in ran.output and API_KEY not in ran.output and OTHERS not in ran.output
    assert "Permission denied" in ran.output
    assert f"home={world.home}" not in ran.output  # a private home
    assert unchanged(world)


@pytest.mark.parametrize(
    "attempt",
    [
        "echo x > ../outside.txt",
        "echo x > {outside}",
        "ln -s {outside} link && echo x > link",
        "ln {outside} hard && echo x > hard",
        "echo x > /proc/self/root{outside}",
        "echo x > /usr/{planted}; echo x > /etc/{planted}; echo x > /{planted}",
        "echo x > {other}/planted",
    ],
    ids=["dotdot", "absolute", "symlink", "hardlink", "proc-self", "system", "other-session"],
)
async def test_nothing_outside_the_workspace_is_written(
    world: World, run: Run, attempt: str, planted: str
) -> None:
    command = attempt.format(
        outside=world.outside, other=world.other, root=world.root, planted=planted
    )
    ran = await run(command)
    assert ran.exit_code != 0
    assert unchanged(world)
    assert not any(exists(f"{top}/{planted}") for top in ("/usr", "/etc", ""))
    assert ran.note is not None and "outside what the sandbox allows" in ran.note


async def test_the_workspace_and_a_private_tmp_are_written(world: World, run: Run) -> None:
    ran = await run('echo made > made.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; pwd')
    assert ran.exit_code == 0, ran.output
    assert (world.work / "made.txt").read_text() == "made\n"
    assert ran.output.split() == ["t", str(world.work)]


async def test_the_private_tmp_goes_with_the_command(world: World, run: Run) -> None:
    ran = await run('echo "$TMPDIR"')
    assert ran.output.strip().startswith("/tmp/iac-code-sandbox-")
    assert not exists(ran.output.strip())


async def test_read_only_writes_nothing(world: World) -> None:
    ran = await runner(world, READ, engine="landlock")("echo x > new.txt; cat readme.txt")
    assert "the session's own file" in ran.output
    assert not (world.work / "new.txt").exists()


async def test_no_tcp_connection_is_made(world: World, run: Run) -> None:
    with listening("127.0.0.1") as server:
        port = server.getsockname()[1]
        ran = await run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        assert "connected" not in ran.output
        assert not accepted(server)


async def test_the_server_is_neither_signalled_nor_traced(world: World, run: Run) -> None:
    server = os.getpid()
    ran = await run(
        f"kill -0 {server} && echo signalled; "
        f"/usr/bin/python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        f'print("ptrace", l.ptrace(16, {server}, 0, 0), ctypes.get_errno())\''
    )
    assert "signalled" not in ran.output
    assert "ptrace -1 1" in ran.output


@pytest.mark.parametrize("call", ["unshare -U true", "unshare -n true"])
async def test_namespaces_are_refused(world: World, run: Run, call: str) -> None:
    ran = await run(f"{call} && echo escaped")
    assert "escaped" not in ran.output


async def test_a_huge_file_is_ended_by_the_file_size_limit(world: World) -> None:
    run = runner(world, limits=Limits(max_file_bytes=2**20), engine="landlock")
    ran = await run("head -c 64M /dev/zero > big.bin; echo status=$?")
    assert (world.work / "big.bin").stat().st_size == 2**20
    assert "status=153" in ran.output


async def test_nothing_it_leaves_behind_outlives_it(world: World, run: Run) -> None:
    marker = f"iac-landlock-{uuid.uuid4().hex[:12]}"
    ran = await run(
        f"setsid bash -c 'exec -a {marker}-setsid sleep 1000' & "
        f"( exec -a {marker}-double-fork sleep 1000 & ) & "
        f"until [ \"$(pgrep -cf '^{marker}-')\" = 2 ]; do sleep 0.05; done; echo all-started"
    )
    assert "all-started" in ran.output
    assert survivors(marker) == []
