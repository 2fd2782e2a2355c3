"""scripts/ensure-chromium, which .ci/run calls so the browser tests never skip in CI: it
leaves a working browser alone, and says why when it cannot provide one. apt-get is a stub
on PATH here and the browser's path a file in tmp_path: nothing is installed by the test."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ensure-chromium"
BROWSER = Path("/usr/bin/chromium")


def executable(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def run(tmp_path: Path, browser: Path, apt_get: str) -> subprocess.CompletedProcess[str]:
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    executable(stubs / "apt-get", apt_get)
    env = {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "ENSURE_CHROMIUM_PATH": str(browser),
    }
    return subprocess.run(
        [str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_working_browser_is_left_alone(tmp_path: Path) -> None:
    browser = executable(tmp_path / "chromium", 'echo "Chromium 1.0"')
    calls = tmp_path / "apt-calls"
    for _ in range(2):  # idempotent
        result = run(tmp_path, browser, f'echo "$@" >> {calls}; exit 1')
        assert (result.returncode, result.stderr) == (0, "")
    assert not calls.exists()  # apt-get never asked


def test_a_browser_that_does_not_start_fails_loudly(tmp_path: Path) -> None:
    browser = executable(tmp_path / "chromium", 'echo "missing libnss3.so" >&2; exit 127')
    result = run(tmp_path, browser, "exit 0")
    assert result.returncode != 0
    assert "missing libnss3.so" in result.stderr
    assert f"{browser} is installed but does not start" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the install path runs as root only")
def test_apt_get_failing_is_reported_with_its_output(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "absent", 'echo "E: Unable to locate package"; exit 100')
    assert result.returncode == 100
    assert "E: Unable to locate package" in result.stderr
    assert "apt-get could not install chromium (exit 100)" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the install path runs as root only")
def test_an_install_that_leaves_no_browser_fails(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "absent", "exit 0")
    assert result.returncode != 0
    assert "yet" in result.stderr and "is missing" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="as root the script installs instead")
def test_without_root_it_says_so(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "absent", "exit 0")
    assert result.returncode != 0
    assert "installing it needs root" in result.stderr


@pytest.mark.skipif(not os.environ.get("CI"), reason="CI (.ci/run) provides the browser")
def test_ci_has_the_browser() -> None:
    assert os.access(BROWSER, os.X_OK), ".ci/run must run scripts/ensure-chromium first"
