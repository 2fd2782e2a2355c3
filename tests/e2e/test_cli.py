import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from adapters.persistence.migrate import SCHEMA_HEAD
from tests.e2e.conftest import IAC_CODE
from tests.http.container import compose, dockerfile, dockerfile_env, exec_form

pytestmark = pytest.mark.e2e


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


def test_the_container_serves_http_on_all_interfaces_with_a_token_and_a_volume() -> None:
    from bootstrap.cli import _parser

    docker, env = dockerfile(), dockerfile_env()
    service = compose()["services"]["iac-code"]
    command = exec_form(docker["CMD"][-1])
    assert exec_form(docker["ENTRYPOINT"][-1]) == ["iac-code"]
    assert service["command"] == command
    args = _parser().parse_args(command)
    assert (args.command, args.transport, args.host, args.port) == ("acp", "http", "0.0.0.0", 8765)
    assert docker["EXPOSE"] == ["8765"]
    assert service["ports"] == ["127.0.0.1:8765:8765"]

    # The token is required twice over: compose refuses to start without it, and so does
    # the server itself (IAC_CODE_HTTP_REQUIRE_TOKEN, set in the image).
    environment = service["environment"]
    assert environment["IACCODE_ACP_HTTP_TOKEN"].startswith("${IACCODE_ACP_HTTP_TOKEN:?")
    assert environment["IAC_CODE_HTTP_REQUIRE_TOKEN"] == env["IAC_CODE_HTTP_REQUIRE_TOKEN"] == "1"

    # Sessions live in SQLite under the config dir, which is a named volume.
    volume, _, mount = service["volumes"][0].partition(":")
    assert volume in compose()["volumes"]
    assert mount == env["IAC_CODE_CONFIG_DIR"]

    health = service["healthcheck"]["test"]
    assert health[0] == "CMD" and "http://127.0.0.1:8765/healthz" in health[-1]
    assert docker["HEALTHCHECK"][-1].endswith(json.dumps(health[1:]))

    assert docker["USER"][-1] not in ("root", "0")
    assert "useradd" in " ".join(docker["RUN"])
