"""A replica's lock file, held by a real process and let go by the kernel when it dies."""

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.presence import STALE_AFTER, LockFilePresence
from tests.support import children

pytestmark = pytest.mark.integration

HOLD = """
import sys
from pathlib import Path
from adapters.presence import LockFilePresence
LockFilePresence(Path(sys.argv[1]), sys.argv[2]).here()
print("here", flush=True)
sys.stdin.read()  # until the test kills it
"""


def eventually(condition: Callable[[], bool], bound: float = 30.0) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.01)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    with children.start(
        [sys.executable, "-c", HOLD, str(tmp_path / "replicas"), "replica-a"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "here\n"
        yield process
        process.kill()


def test_a_running_replica_is_not_gone_and_a_killed_one_is(
    tmp_path: Path, running: subprocess.Popen[str]
) -> None:
    me = LockFilePresence(tmp_path / "replicas", "replica-b")
    me.here()
    assert not me.gone("replica-a")
    assert not me.gone("replica-a")  # looking does not take its lock away
    running.kill()
    running.wait()
    eventually(lambda: me.gone("replica-a"))


def test_unknown_holders_are_never_gone(tmp_path: Path) -> None:
    me = LockFilePresence(tmp_path / "replicas", "replica-b")
    me.here()
    assert not me.gone("replica-on-another-machine")  # no file here
    assert not me.gone("replica-b")  # ourselves
    assert not me.gone("../replicas/replica-b")  # not a replica id: never a path


def test_another_process_with_our_id_cannot_count_us_gone(tmp_path: Path) -> None:
    first = LockFilePresence(tmp_path / "replicas", "replica-a")
    first.here()
    other = LockFilePresence(tmp_path / "replicas", "replica-b")
    assert not other.gone("replica-a")


def test_files_of_replicas_long_exited_are_swept(
    tmp_path: Path, running: subprocess.Popen[str]
) -> None:
    directory = tmp_path / "replicas"
    old = time.time() - STALE_AFTER - 60
    exited = directory / "replica-old.lock"
    exited.touch()
    os.utime(exited, (old, old))
    recent = directory / "replica-recent.lock"
    recent.touch()
    alive = directory / "replica-a.lock"
    os.utime(alive, (old, old))  # old, but its process runs
    LockFilePresence(directory, "replica-b").here()
    assert not exited.exists()
    assert recent.exists() and alive.exists()
