"""docs/http.md's curl walkthrough runs as written: bash + curl against the real server
(`iac-code acp --transport http`, demo model) on 127.0.0.1."""

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.http.walkthrough import ROOT, free_port, run_walkthrough, server_process

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


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_finding_14_the_walkthrough_stops_at_a_wrong_token(tmp_path: Path) -> None:
    """A token the server does not know: step 1 fails, and the walkthrough ends there with
    curl's reason, instead of going on to wait for a stream that never comes."""
    workdir = tmp_path / "project"
    workdir.mkdir()
    argv = ["acp", "--transport", "http", "--port", str(free_port())]
    with server_process(argv, server_env(tmp_path / "data", TOKEN), tmp_path / "server.log") as (
        base,
        _,
    ):
        result = run_walkthrough(f"{base}/acp", cwd=workdir, token="not-the-token")
    assert_stopped_at_the_first_step(result)
    assert "error: 401" in result.stderr


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_finding_14_the_walkthrough_stops_when_no_server_answers(tmp_path: Path) -> None:
    with socket.socket() as refusing:  # bound, never listening: connections are refused
        refusing.bind(("127.0.0.1", 0))
        port = refusing.getsockname()[1]
        result = run_walkthrough(f"http://127.0.0.1:{port}/acp", cwd=tmp_path, token=None)
    assert_stopped_at_the_first_step(result)
    assert "curl: (7)" in result.stderr


def assert_stopped_at_the_first_step(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode != 0
    assert "Connection ID" not in result.stdout  # step 1 was the last
    assert "nothing matched" not in result.stderr, result.stderr  # no step waited


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_finding_14_the_readmes_network_command_shows_the_token_it_serves_with(
    tmp_path: Path,
) -> None:
    """The README's block, run by bash with a stand-in for the server that prints the token
    it was started with: the user is shown that same token (before, it was made and lost)."""
    readme = (ROOT / "README.md").read_text().split("## Over the network", 1)[1]
    match = re.search(r"^```sh\n(.*?)^```$", readme, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no sh block under 'Over the network'"
    server = tmp_path / ".venv" / "bin" / "iac-code"
    server.parent.mkdir(parents=True)
    server.write_text('#!/bin/sh\necho "served with: $IACCODE_ACP_HTTP_TOKEN"\n')
    server.chmod(0o755)
    result = subprocess.run(
        ["bash", "-e", "-c", match.group(1)],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    shown = re.search(r"^token: ([0-9a-f]{64})$", result.stdout, re.MULTILINE)
    assert shown, result.stdout
    assert f"served with: {shown.group(1)}" in result.stdout
