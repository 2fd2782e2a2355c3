"""A real `iac-code acp --transport http` process that can be stopped (SIGTERM, as a
service manager stops it) and started again on the same port and database: a restart."""

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.conftest import IAC_CODE
from tests.http.walkthrough import free_port, wait_until_healthy
from tests.support import children
from tests.support.patience import PATIENCE

TOKEN = "browser-token-0123456789"


@dataclass
class Server:
    """An `iac-code acp --transport http` process that can be stopped and started again on
    the same port and database (a restart)."""

    config_dir: Path
    log: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as stderr:
            self.process = children.start(
                [IAC_CODE, "acp", "--transport", "http", "--port", str(self.port)],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        wait_until_healthy(self.process, self.base, self.log)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(PATIENCE)


def server_env(config_dir: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(config_dir),
        "NO_PROXY": "127.0.0.1,localhost",
        "IAC_CODE_CONFIG_DIR": str(config_dir),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
        "IACCODE_ACP_HTTP_TOKEN": TOKEN,
        **extra,
    }


@contextmanager
def serving(tmp_path: Path, **extra: str) -> Iterator[Server]:
    config_dir = tmp_path / "config"
    server = Server(config_dir, tmp_path / "server.log", server_env(config_dir, **extra))
    server.start()
    try:
        yield server
    finally:
        server.stop()
