"""The hexagon's import rules (pyproject.toml [tool.importlinter]) hold on every test run."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_nothing_but_entry_points_imports_bootstrap() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("domain", "application", "adapters", "migrations")
        for path in (ROOT / package).rglob("*.py")
        if "import bootstrap" in path.read_text() or "from bootstrap" in path.read_text()
    ]
    assert offenders == []
