"""The curl walkthrough of docs/http.md, as written, and a real server process to run it
against."""

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.e2e.conftest import IAC_CODE
from tests.support import children
from tests.support.patience import PATIENCE

ROOT = Path(__file__).resolve().parents[2]


def walkthrough_script() -> str:
    """The first `sh` block under the walkthrough's heading in docs/http.md."""
    text = (ROOT / "docs" / "http.md").read_text()
    section = text.split("## Walkthrough with curl", 1)[1]
    match = re.search(r"^```sh\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert match, "docs/http.md has no sh block under 'Walkthrough with curl'"
    return match.group(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_healthy(process: subprocess.Popen[bytes], base: str, log: Path) -> None:
    """Until the server at `base` answers /healthz (its log shown if it exits first)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the server did not come up"
        time.sleep(0.05)


@contextmanager
def server_process(
    argv: list[str], env: dict[str, str], log: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`iac-code <argv>` (argv names --port) until it answers /healthz; yields its base URL
    and the process. Stopped with SIGTERM, as a container is."""
    port = argv[argv.index("--port") + 1]
    with log.open("wb") as stderr:
        process = children.start(
            [IAC_CODE, *argv], env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(process, base, log)
        yield base, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(PATIENCE)


def run_walkthrough(
    acp_url: str, cwd: Path, token: str | None, workdir: str | None = None
) -> subprocess.CompletedProcess[str]:
    """bash -e runs the walkthrough: any failing step fails it."""
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "ACP": acp_url}
    if token is not None:
        env["IACCODE_ACP_HTTP_TOKEN"] = token
    if workdir is not None:
        env["WORKDIR"] = workdir
    return subprocess.run(
        ["bash", "-e", "-c", walkthrough_script()],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
