"""A PostgreSQL server of a test's own, made with the installed binaries (initdb, pg_ctl)
on a free port, for tests that restart the server: the machine's shared server is never
stopped. Skips (saying why) only when the binaries are missing.

PostgreSQL refuses to run as root: under root the server runs as the `postgres` user, its
directory outside root's private temporary directory."""

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.http.walkthrough import free_port


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


@dataclass
class ThrowawayPostgres:
    bin: Path
    data: Path
    port: int
    user: str | None  # run as this user (we are root), else as ourselves

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data}"
        log = str(self.data / "server.log")
        self._run("pg_ctl", "-D", str(self.data / "db"), "-o", options, "-l", log, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data / "db"), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()


@contextlib.contextmanager
def throwaway_postgres(tmp_path: Path) -> Iterator[ThrowawayPostgres]:
    binaries = _binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
    user: str | None = None
    if os.geteuid() == 0:
        user = "postgres"
        data = Path(tempfile.mkdtemp(prefix="iac-pg-"))
        owner = pwd.getpwnam(user)
        os.chown(data, owner.pw_uid, owner.pw_gid)
    else:
        data = tmp_path / "postgres"
        data.mkdir()
    server = ThrowawayPostgres(binaries, data, free_port(), user)
    try:
        server._run("initdb", "-D", str(data / "db"), "-U", "postgres", "--auth=trust", "-N")
        server.start()
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.stop("immediate")
        if user is not None:
            shutil.rmtree(data, ignore_errors=True)
