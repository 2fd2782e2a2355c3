import argparse
import importlib.metadata
import json
import os
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from adapters.persistence.migrate import SCHEMA_HEAD
from tests.e2e.conftest import IAC_CODE
from tests.http.container import (
    ROOT,
    compose,
    dockerfile,
    dockerfile_env,
    exec_form,
    services_of,
)

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
    assert result.stdout == f"iac-code {importlib.metadata.version('iac-code')}\n"


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


def test_the_default_profile_is_the_one_container_alone() -> None:
    assert list(services_of(None)) == ["iac-code"]


def test_the_cluster_profile_is_postgres_two_replicas_and_nginx_as_tests_cluster_runs_them() -> (
    None
):
    from deploy.nginx_conf import Replica, render
    from tests.support.cluster import COMPOSE_REPLICAS, replica_command

    cluster = services_of("cluster")
    assert list(cluster) == ["postgres", *COMPOSE_REPLICAS, "nginx"]

    # The replicas: the image's command (the one tests/cluster runs, on a loopback address
    # and port), one PostgreSQL database, each its own replica id, ready once migrated.
    image_command = exec_form(dockerfile()["CMD"][-1])
    loopback = replica_command("127.0.0.1", 1234)
    assert [a for a in loopback if a not in ("127.0.0.1", "1234")] == [
        a for a in image_command if a not in ("0.0.0.0", "8765")
    ]
    environments = []
    for name in COMPOSE_REPLICAS:
        replica = cluster[name]
        assert replica["build"] == "." and replica["command"] == image_command
        env = dict(replica["environment"])
        assert env.pop("IAC_CODE_REPLICA_ID") == name
        assert env["IAC_CODE_DATABASE_URL"].startswith("postgresql+asyncpg://iac_code:")
        assert env["IAC_CODE_DATABASE_URL"].endswith("@postgres:5432/iac_code")
        assert env["IACCODE_ACP_HTTP_TOKEN"].startswith("${IACCODE_ACP_HTTP_TOKEN:?")
        assert "IAC_CODE_LEASE_SECONDS" in env
        assert replica["depends_on"] == {"postgres": {"condition": "service_healthy"}}
        assert "http://127.0.0.1:8765/readyz" in replica["healthcheck"]["test"][-1]
        assert "ports" not in replica  # reached through nginx only
        environments.append(env)
    assert environments[0] == environments[1]  # alike but for the replica id

    postgres = cluster["postgres"]["environment"]
    assert (postgres["POSTGRES_USER"], postgres["POSTGRES_DB"]) == ("iac_code", "iac_code")

    # nginx serves the committed configuration, which is the template tests/cluster runs,
    # rendered for these replicas on the port it publishes.
    nginx = cluster["nginx"]
    conf, _, mount = nginx["volumes"][0].partition(":")
    assert mount == "/etc/nginx/conf.d/default.conf:ro"
    assert nginx["ports"] == ["127.0.0.1:8080:8080"]
    upstreams = [Replica(name, f"{name}:8765") for name in COMPOSE_REPLICAS]
    assert (ROOT / conf).read_text() == render(upstreams, listen="8080")
    assert set(nginx["depends_on"]) == set(COMPOSE_REPLICAS)


def test_finding_15_a_reader_that_stops_reading_ends_sessions_list_quietly(
    tmp_path: Path,
) -> None:
    """`iac-code sessions list | head`: the pipe's reader is gone before anything is
    written (its end closed up front, so every run is the worst case)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [IAC_CODE, "sessions", "list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={"PATH": os.environ["PATH"], "IAC_CODE_CONFIG_DIR": str(tmp_path)},
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr  # 128 + SIGPIPE, as a shell reports it
    for noise in ("Traceback", "BrokenPipeError", "Exception ignored"):
        assert noise not in result.stderr


@pytest.mark.parametrize("layout", ["missing", "no-projects"])
def test_finding_15_import_from_a_directory_without_sessions_fails(
    tmp_path: Path, layout: str
) -> None:
    source = tmp_path / "legacy"
    if layout == "no-projects":
        source.mkdir()
    result = run(
        "sessions", "import", "--from", str(source), env={"IAC_CODE_CONFIG_DIR": str(tmp_path)}
    )
    assert result.returncode == 1
    assert str(source) in result.stderr
    assert "imported" not in result.stdout
    assert not (tmp_path / "iac-code.db").exists()  # nothing created for nothing


def test_finding_15_acp_help_describes_every_option_and_its_default() -> None:
    from bootstrap.cli import _parser

    result = run("acp", "--help", env={})
    assert result.returncode == 0
    shown = " ".join(result.stdout.split())
    assert "HTTP + SSE and WebSocket" in shown
    [commands] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    actions = commands.choices["acp"]._actions
    options = [a for a in actions if a.option_strings and a.dest != "help"]
    assert {o.dest for o in options} == {"transport", "host", "port"}
    # The one positional: what an editor's terminal sign-in appends (`iac-code acp login`).
    assert [a.dest for a in actions if not a.option_strings] == ["action"]
    assert "login sign in as `iac-code login` does, instead of serving" in shown
    for option in options:
        assert option.help and len(option.help.split()) > 3, option.dest
        assert " ".join(option.help.split()) in shown
        assert f"(default: {option.default})" in shown


def test_finding_9_acp_help_shows_its_usage_with_login_as_an_optional_word() -> None:
    """Issue #42, finding 9: the usage ended in `[login] ...`, as if more followed."""
    result = run("acp", "--help", env={})
    usage = " ".join(result.stdout.split("\n\n", 1)[0].split())
    assert usage == (
        "usage: iac-code acp [-h] [--transport {stdio,http}] [--host HOST] [--port PORT] [login]"
    )
    assert "(default: None)" not in result.stdout
    wrong = run("acp", "logout", env={})
    assert wrong.returncode == 2
    assert "invalid choice: 'logout'" in wrong.stderr


def test_finding_15_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(
            "acp",
            "--transport",
            "http",
            "--port",
            str(port),
            env={"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER": "demo"},
        )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"iac-code: cannot listen on 127.0.0.1:{port}: "), result.stderr
    assert "--port" in lines[-1]
    assert "Traceback" not in result.stderr
    assert "startup complete" not in result.stderr.lower()
