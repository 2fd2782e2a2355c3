"""The README's `make run`, as an editor would start it from elsewhere: stdout is JSON-RPC."""

import json
import shutil
import subprocess
import sys
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


# A stand-in for `python3 -m venv`: a venv whose pip writes down what it was asked to install
# and whose iac-code answers `initialize`, so the Makefile's own rules run in a second.
FAKE_PYTHON = """#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 2
mkdir -p "$3/bin"
printf '#!/bin/sh\\necho "$*" >> "$(dirname "$0")/../pip.log"\\n' > "$3/bin/pip"
printf '#!/bin/sh\\necho %s\\n' '{"jsonrpc":"2.0","id":0,"result":{}}' > "$3/bin/iac-code"
touch "$3/bin/python"
chmod +x "$3/bin/pip" "$3/bin/iac-code" "$3/bin/python"
"""


def project_with_fake_python(tmp_path: Path) -> tuple[Path, str]:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        (project / name).write_bytes((REPO / name).read_bytes())
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return project, f"PYTHON={python}"


def installs(project: Path) -> list[str]:
    log = project / ".venv" / "pip.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if "--upgrade pip" not in line]


def test_finding_16_make_run_installs_only_the_server(tmp_path: Path) -> None:
    project, python = project_with_fake_python(tmp_path)
    run = make("-s", python, "run", cwd=project)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    assert installs(project) == ["install --quiet -e ."]  # no test tools
    assert (project / ".venv" / ".installed-run").exists()
    assert not (project / ".venv" / ".installed").exists()  # the test stamp is make test's
    again = make("-s", python, "run", cwd=project)
    assert again.returncode == 0
    assert installs(project) == ["install --quiet -e ."]  # installed once
    # .ci/run's `make .venv/.installed`: the server with its test tools, then `make run`
    # (from scratch) finds the server there and installs nothing more.
    assert make("-s", python, ".venv/.installed", cwd=project).returncode == 0
    assert installs(project)[-1] == "install --quiet -e .[test]"
    (project / ".venv" / ".installed-run").unlink()
    assert make("-s", python, "run", cwd=project).returncode == 0
    assert installs(project)[-1] == "install --quiet -e .[test]"


def test_finding_16_the_editable_install_prints_no_setuptools_warning_box(
    tmp_path: Path,
) -> None:
    """The install `make run` and `make test` make, of this pyproject.toml, with the real
    pip and setuptools (without the dependencies)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (source / name).write_bytes((REPO / name).read_bytes())
    for package in ("domain", "application", "adapters", "bootstrap", "migrations"):
        shutil.copytree(
            REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    # Into a venv of its own: pip would uninstall the running test venv's iac-code first.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "-e",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Editable installation" not in result.stderr, result.stderr
    assert "Please be careful" not in result.stderr
