"""Issue 25, findings 2 and 3, beyond the e2e tests.

Finding 2 as an ordinary user (as the container image runs, uid 10001): the server's real
hardening (bootstrap.hardening) and the tools' real launcher, run under that uid by a
stand-in server, against the probe the e2e tests use. Needs root to switch uid, util-linux's
setpriv, and a Python the other uid may run (this checkout's virtualenv may live under
/root): skipped otherwise. As root, tests/e2e/test_stdio_tool_processes.py covers the real
server. Finding 3: what outlives its launcher is found by the run's marker."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import textwrap
import uuid
from pathlib import Path

import pytest

from adapters.tools.base import Limits
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.local import LocalWorkspace
from application.ports.tools import ToolContext
from tests.support.processes import survivors

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "adapters" / "workspace" / "launcher.py"
PROBE = ROOT / "tests" / "support" / "memory_probe.py"
UID = 10001
SECRET = "sk-ordinary-user-secret"

LOCAL = LocalWorkspace()  # the runner's workspace for contexts that bring none


def _python_for_others() -> str | None:
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).exists():
            done = subprocess.run(
                [
                    "setpriv",
                    f"--reuid={UID}",
                    f"--regid={UID}",
                    "--clear-groups",
                    candidate,
                    "-c",
                    f"import ctypes; open({str(LAUNCHER)!r}).close()",
                ],
                capture_output=True,
            )
            if done.returncode == 0:
                return candidate
    return None


def _probe_as_ordinary_user(python: str, *, undumpable: bool) -> dict:
    # The stand-in server: the key in its heap, hardened as the CLI hardens the real one (or
    # not: the state before the fix), then one bash command through the launcher.
    server = textwrap.dedent(
        f"""
        import os, subprocess, sys
        sys.path.insert(0, {str(ROOT)!r})
        from bootstrap.hardening import make_undumpable
        key = "".join(reversed({SECRET[::-1]!r}))  # built here: in the heap only
        if {undumpable!r}:
            assert make_undumpable()
        reader, writer = os.pipe()
        command = f"{python} {PROBE} {{os.getpid()}} {SECRET[::-1]}"
        done = subprocess.run(
            [sys.executable, "-I", "-S", {str(LAUNCHER)!r}, command],
            stdin=reader, capture_output=True, text=True, cwd="/",
        )
        print(done.stdout, end="")
        """
    )
    done = subprocess.run(
        ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", python, "-c", server],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_finding_2_an_ordinary_users_server_is_unreadable_by_its_tools() -> None:
    # Issue 41 moved the launcher and this test skipped itself ever since: a path that is
    # not there fails, it does not skip.
    assert LAUNCHER.is_file(), f"no launcher at {LAUNCHER}"
    python = _python_for_others()
    if python is None:
        pytest.skip(f"no Python that uid {UID} may run")
    before = _probe_as_ordinary_user(python, undumpable=False)
    # What the image's uid 10001 server was before the fix: all of it readable, the key too.
    assert before["mem"] == before["environ"] == before["fd"] == "read"
    assert before["mem_found"] is True
    after = _probe_as_ordinary_user(python, undumpable=True)
    assert after["self_mem"] == "read"
    assert after["mem"] == after["process_vm_readv"] == "PermissionError"
    assert after["environ"] == after["fd"] == "PermissionError"
    assert after["mem_found"] is False


async def test_finding_3_what_outlives_a_killed_launcher_is_found_by_its_marker(
    tmp_path: Path,
) -> None:
    marker = f"iac-probe-{uuid.uuid4().hex[:12]}"
    command = (
        f"setsid bash -c 'exec -a {marker}-setsid sleep 1000' & "
        f"until pgrep -f '^{marker}-' >/dev/null; do sleep 0.05; done; "
        "kill -9 $PPID; exec -a " + marker + "-shell sleep 1000"
    )
    try:
        result = await LocalToolRunner(Limits(), LOCAL).run(
            "bash", {"command": command}, ToolContext(cwd=str(tmp_path), model="m"), _nothing
        )
        assert result.raw_output["exitCode"] == -signal.SIGKILL  # the launcher's death
        assert survivors(marker) == []  # reparented to init, yet ended by the server
    finally:
        for pid in survivors(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


async def _nothing(chunk: str) -> None:
    pass
