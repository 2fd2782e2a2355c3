"""Finding 8 of issue #42: pytest crashed while formatting one failure in an xdist worker
(`SystemError: AST constructor recursion depth mismatch`, CPython gh-106905) and the
INTERNALERROR ended the run, ~1,000 tests never run. With tests/support/failure_reports.py a
run whose formatter breaks reports that failure plainly and runs every other test."""

import os
import subprocess
import sys
from pathlib import Path

from tests.support.patience import PATIENCE

ROOT = Path(__file__).resolve().parents[2]

INNER_TESTS = """
import _pytest._code.code


def test_fails_where_the_formatter_breaks(monkeypatch):
    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=90, after=65)")

    monkeypatch.setattr(_pytest._code.code, "getstatementrange_ast", broken)
    assert 1 + 1 == 3, "the failure to report"


def test_runs_anyway():
    assert True
"""


def test_finding_8_a_failure_pytest_cannot_format_does_not_end_the_run(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    plugin = ["-p", "tests.support.failure_reports", "-p", "no:cacheprovider"]
    # Its own temporary directory, so that its end never deletes earlier runs' (as the
    # default numbered ones do): see test_suite_leaves_no_process.py.
    plugin += ["--basetemp", str(tmp_path / "basetemp")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-n", "2", "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=4 * PATIENCE,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "INTERNALERROR" not in output, output
    assert done.returncode == 1, output  # tests failed; not 3, an internal error
    assert "1 failed, 1 passed" in output, output
    assert "the failure to report" in output, output
    assert "pytest could not format this failure: SystemError" in output, output
