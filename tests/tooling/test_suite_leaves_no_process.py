"""Finding 8 of issue #42: an aborted run left an `iac-code acp --transport http` test
server running with no parent. Every child a test starts through tests/support/children.py
dies with the session, however the session ends: here a real pytest run whose test starts
a real server is killed (SIGKILL: no Python code runs any more) or interrupted (SIGINT, as
Ctrl-C), and the server must be gone after."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import IAC_CODE
from tests.support.patience import PATIENCE

ROOT = Path(__file__).resolve().parents[2]

# The inner run's only test: a server started as the suite starts them, then a wait for
# the outer test to end the run. Its pid goes to a file for the outer test to watch.
INNER_TEST = f"""
import faulthandler, os, signal, subprocess, time
from pathlib import Path

from tests.support import children

# Where the run is, on SIGUSR1: what the outer test shows if the run outlives its patience.
faulthandler.register(signal.SIGUSR1, open(os.environ["STACKS_FILE"], "w"), all_threads=True)


def test_serves_until_the_run_is_ended(tmp_path):
    server = children.start(
        [{IAC_CODE!r}, "acp", "--transport", "http", "--port", "0"],
        env={{**os.environ, "IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER": "demo"}},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    Path(os.environ["SERVER_PID_FILE"]).write_text(str(server.pid))
    time.sleep(3600)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is gone for our purpose)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def _where(pid: int, stacks: Path) -> str:
    """A run that outlived its patience: its signal state and its threads' Python stacks."""
    status = Path(f"/proc/{pid}/status").read_text()
    signals = [line for line in status.splitlines() if line.startswith(("State", "Sig", "Shd"))]
    os.kill(pid, signal.SIGUSR1)
    time.sleep(1)
    return "\n".join([*signals, stacks.read_text() if stacks.exists() else "(no stacks)"])


def _as_at_a_terminal() -> None:
    """In the inner run's process before it starts: SIGINT as at a terminal, where Ctrl-C
    reaches a pytest that takes it. A suite started in the background by a non-interactive
    shell (`make test &`, a CI runner's script) inherits SIGINT ignored, and so would the
    inner run: it slept through the signal (loaded runs started that way failed here, the
    run's SigIgn showing SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.parametrize("ending", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_finding_8_a_server_a_test_started_dies_with_the_run(
    tmp_path: Path, ending: signal.Signals
) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    pid_file = tmp_path / "server.pid"
    stacks = tmp_path / "stacks.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SERVER_PID_FILE": str(pid_file),
        "STACKS_FILE": str(stacks),
    }
    inner = ["-p", "no:xdist", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
    # Its own temporary directory: with the default one, the inner session's end deletes
    # all but the newest three of /tmp/pytest-of-<user>/'s finished numbered directories,
    # earlier whole runs' trees (20 s for one of 700 MB on a busy machine).
    inner += ["--basetemp", str(tmp_path / "basetemp")]
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", *inner, "-c", os.devnull, str(pid_file.parent)],
        cwd=tmp_path,
        env=env,
        preexec_fn=_as_at_a_terminal,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _until(lambda: pid_file.exists() and pid_file.read_text(), "the inner test never ran")
        server = int(pid_file.read_text())
        assert _alive(server)
        run.send_signal(ending)
        try:
            run.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end: {_where(run.pid, stacks)}")
        _until(lambda: not _alive(server), f"the server ({server}) outlived the run")
    finally:
        run.kill()
        run.wait()
