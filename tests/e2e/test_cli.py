import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from adapters.persistence.migrate import SCHEMA_HEAD
from tests.e2e.conftest import IAC_CODE

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IAC_CODE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], **env},
        check=False,
    )


def test_version() -> None:
    result = run("--version", env={})
    assert result.returncode == 0
    assert result.stdout.startswith("iac-code ")


def test_db_upgrade_creates_and_then_keeps_the_schema(tmp_path: Path) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path)}
    first = run("db", "upgrade", env=env)
    assert first.returncode == 0, first.stderr
    assert "migrated" in first.stderr
    assert first.stdout == ""
    again = run("db", "upgrade", env=env)
    assert "already" in again.stderr
    with sqlite3.connect(tmp_path / "iac-code.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(SCHEMA_HEAD,)]


def test_configuration_errors_are_reported_without_a_traceback(tmp_path: Path) -> None:
    result = run("acp", env={"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER": "nope"})
    assert result.returncode == 2
    assert "IAC_CODE_PROVIDER" in result.stderr
    assert "Traceback" not in result.stderr


def test_compose_runs_a_command_the_cli_accepts() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    assert 'command: ["acp", "--transport", "http"' in compose
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["iac-code"]' in dockerfile
    from bootstrap.cli import _parser

    args = _parser().parse_args(
        ["acp", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
    )
    assert (args.transport, args.port) == ("http", 8765)
