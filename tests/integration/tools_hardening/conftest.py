"""A project directory, a directory outside it, and a tool runner on the real tools."""

from pathlib import Path

import pytest

from adapters.tools.base import Limits
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.local import LocalWorkspace


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('inside')\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere"
    (secret / "deeper").mkdir(parents=True)
    (secret / "secret.txt").write_text("SECRET-TOKEN\n")
    (secret / "deeper" / "more-secret.py").write_text("SECRET-TOKEN = 1\n")
    return secret


@pytest.fixture
def runner() -> LocalToolRunner:
    return LocalToolRunner(
        Limits(output_chars=2_000, read_lines=50, bash_timeout=30), LocalWorkspace()
    )
