"""The sandbox for a server running as an ordinary user (the image's uid 10001): the real
launcher, run under that uid with the machine's Python, confines commands the way the
server hands it (the spec is built here, as the server builds it). bubblewrap then works
without privileges (unprivileged user namespaces), and the process limit holds: a fork
bomb stops at it. Needs root to switch uid (CI runs as root): it fails, never skips, when
it cannot."""

import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.workspace.confinement import Confinement, Limits
from adapters.workspace.processes import LAUNCHER
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy
from tests.support.processes import survivors

pytestmark = pytest.mark.integration

UID = 10001
PYTHON = "/usr/bin/python3"  # the machine's: this checkout's interpreter may live under /root
KEY = "UNPRIVILEGED-SSH-KEY-31d9"
WRITE = SandboxPolicy(level=SandboxLevel.WORKSPACE_WRITE, network=NetworkLevel.NONE)


@dataclass(frozen=True)
class Home:
    root: Path
    home: Path
    work: Path
    outside: Path


@pytest.fixture
def ordinary(monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    if os.geteuid() != 0 or not shutil.which("setpriv") or not Path(PYTHON).exists():
        pytest.fail("these tests need root, util-linux's setpriv and /usr/bin/python3")
    root = Path(f"/tmp/iac-unprivileged-{uuid.uuid4().hex[:12]}")
    home, work = root / "home", root / "work"
    (home / ".ssh").mkdir(parents=True)
    work.mkdir()
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    outside = root / "outside.txt"
    outside.write_text("untouched\n")
    for path in (root, *root.rglob("*")):
        os.chown(path, UID, UID)
    monkeypatch.setenv("HOME", str(home))  # the ordinary user's, as its server would have
    yield Home(root, home, work, outside)
    shutil.rmtree(root, ignore_errors=True)


def run_as_ordinary_user(
    where: Home, command: str, limits: Limits | None = None, seconds: float = 60
) -> subprocess.CompletedProcess[str]:
    spec = Confinement.found(limits=limits).launch_argument(
        WRITE, (str(where.work),), str(where.work)
    )
    reader, writer = os.pipe()  # the launcher's watch pipe, as the server holds it
    process = subprocess.Popen(
        [
            *("setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups"),
            *(PYTHON, "-I", "-S", str(LAUNCHER), command, spec),
        ],
        stdin=reader,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=where.work,
        env={"PATH": "/usr/bin:/bin", "HOME": str(where.home)},
    )
    os.close(reader)
    try:
        out, err = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        # As when the server goes away: the launcher ends the command's whole tree.
        os.close(writer)
        writer = -1
        out, err = process.communicate(timeout=30)
    finally:
        if writer >= 0:
            os.close(writer)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_the_launcher_is_where_the_server_starts_it() -> None:
    assert LAUNCHER.is_file()


def test_an_ordinary_users_command_is_confined(ordinary: Home) -> None:
    done = run_as_ordinary_user(
        ordinary,
        f"id -u; cat ~/.ssh/id_ed25519 {ordinary.home}/.ssh/id_ed25519; "
        f"echo x > {ordinary.outside}; echo made > made.txt; "
        "grep -c ^ /proc/self/status >/dev/null && grep NoNewPrivs /proc/self/status",
    )
    assert done.stdout.splitlines()[0] == str(UID)
    assert KEY not in done.stdout + done.stderr
    assert ordinary.outside.read_text() == "untouched\n"
    assert (ordinary.work / "made.txt").read_text() == "made\n"
    assert "NoNewPrivs:\t1" in done.stdout


def test_an_ordinary_users_fork_bomb_stops_at_the_process_limit(ordinary: Home) -> None:
    marker = f"iac-bomb-{uuid.uuid4().hex[:12]}"
    done = run_as_ordinary_user(
        ordinary,
        # 300 sleepers asked for; the limit lets a few dozen start, and bash says so.
        f"for i in $(seq 300); do (exec -a {marker} sleep 30) & done 2>&1 | head -n 3; "
        f"echo started=$(pgrep -cf '^{marker}')",
        limits=Limits(max_processes=40),
    )
    output = done.stdout + done.stderr
    assert "Resource temporarily unavailable" in output, output
    started = int(output.rsplit("started=", 1)[1].split()[0])
    assert 0 < started < 40
    assert survivors(marker) == []  # the launcher ended what the command left running


def test_an_ordinary_users_command_reaches_no_loopback_listener(ordinary: Home) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        done = run_as_ordinary_user(ordinary, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo in")
        with pytest.raises(BlockingIOError):
            server.accept()
    assert "in" not in done.stdout.split()


def test_an_ordinary_users_command_sees_no_other_workspace_and_no_server(ordinary: Home) -> None:
    other = ordinary.root / "other"
    other.mkdir()
    (other / "notes.txt").write_text("ANOTHER-SESSION-77aa")
    os.chown(other, UID, UID)
    os.chown(other / "notes.txt", UID, UID)
    done = run_as_ordinary_user(
        ordinary, f"cat {other}/notes.txt; kill -0 {os.getpid()} && echo signalled; ls /proc"
    )
    assert "ANOTHER-SESSION-77aa" not in done.stdout
    assert "signalled" not in done.stdout
    assert str(os.getpid()) not in done.stdout.split()


def test_an_ordinary_users_huge_file_ends_at_the_size_limit(ordinary: Home) -> None:
    done = run_as_ordinary_user(
        # 64 MiB asked for, 1 MiB allowed: a limit that failed would still end the write.
        ordinary,
        "head -c 64M /dev/zero > big.bin; echo status=$?",
        Limits(max_file_bytes=2**20),
    )
    assert "status=153" in done.stdout
    assert (ordinary.work / "big.bin").stat().st_size == 2**20


def test_an_ordinary_users_leftovers_end_with_the_command(ordinary: Home) -> None:
    marker = f"iac-unpriv-{uuid.uuid4().hex[:12]}"
    done = run_as_ordinary_user(
        ordinary,
        f"setsid bash -c 'exec -a {marker}-setsid sleep 1000' & "
        f"( exec -a {marker}-double-fork sleep 1000 & ) & "
        f"until [ \"$(pgrep -cf '^{marker}-')\" = 2 ]; do sleep 0.05; done; echo all-started",
    )
    assert "all-started" in done.stdout
    assert survivors(marker) == []
