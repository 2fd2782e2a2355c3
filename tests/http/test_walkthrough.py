"""docs/http.md's curl walkthrough runs as written: bash + curl against the real server
(`iac-code acp --transport http`, demo model) on 127.0.0.1."""

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.http.walkthrough import free_port, run_walkthrough, server_process

pytestmark = pytest.mark.e2e

TOKEN = "walkthrough-token-0123456789"


def server_env(config_dir: Path, token: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ["PATH"],
        "IAC_CODE_CONFIG_DIR": str(config_dir),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
    }
    if token is not None:
        env["IACCODE_ACP_HTTP_TOKEN"] = token
    return env


# `<replica id>.<uuid4>`: the replica id defaults to the host's name and random bits.
CONNECTION_ID = r"[A-Za-z0-9_-]{1,40}\.[0-9a-f-]{36}"


def assert_the_walkthrough_went_through(output: str, workdir: Path) -> None:
    assert re.search(rf"^Connection ID: {CONNECTION_ID}$", output, re.MULTILINE), output
    assert re.search(r"^Session ID: \S+$", output, re.MULTILINE), output
    assert '"id":3,"result":{"stopReason":"end_turn"' in output
    assert '"id":4,"result":{"stopReason":"end_turn"' in output
    assert (workdir / "hello.txt").read_text() == "Hello from curl"  # permission granted
    assert re.search(rf'^\{{"closed": ?"{CONNECTION_ID}"\}}$', output, re.MULTILINE), output


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("token", [None, TOKEN], ids=["no-token", "token"])
def test_the_curl_walkthrough_of_docs_http_md_runs_as_written(
    tmp_path: Path, token: str | None
) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    with server_process(argv, server_env(tmp_path / "data", token), tmp_path / "server.log") as (
        base,
        _,
    ):
        result = run_walkthrough(f"{base}/acp", cwd=workdir, token=token)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_the_walkthrough_went_through(result.stdout, workdir)
    assert "Traceback" not in (tmp_path / "server.log").read_text()
