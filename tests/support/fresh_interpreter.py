"""A script run in a new Python interpreter: what a start imports, seen from a process
that has imported nothing of the tests'."""

import subprocess
import sys


def run_python(script: str, *args: str, env: dict[str, str]) -> "subprocess.CompletedProcess[str]":
    """`python -c script args…` with `env`; its output as text, whatever its exit status."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
