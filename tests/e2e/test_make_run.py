"""The README's `make run`, as an editor would start it from elsewhere: stdout is JSON-RPC."""

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'


def make(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["make", *args],
        input=INITIALIZE,
        capture_output=True,
        cwd=cwd,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "IAC_CODE_CONFIG_DIR": str(cwd / "cfg")},
        check=False,
    )


@pytest.mark.parametrize("quiet", ["-s", "--no-print-directory"])
def test_make_run_from_another_directory_keeps_stdout_for_the_protocol(
    tmp_path: Path, quiet: str
) -> None:
    result = make(quiet, "-C", str(REPO), "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    lines = result.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [0]


def test_plain_make_c_run_says_on_stderr_how_to_keep_stdout_clean(tmp_path: Path) -> None:
    result = make("-C", str(REPO), "run", cwd=tmp_path)
    assert "make -s -C DIR run" in result.stderr.decode(errors="replace")
