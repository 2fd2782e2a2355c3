"""The exact command the container runs, run here (no Docker engine on our machines), with
the image's and compose file's environment. Only the port differs: a free one per test."""

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bootstrap.settings import load_settings
from tests.e2e.conftest import IAC_CODE
from tests.http.container import compose, dockerfile, dockerfile_env, exec_form
from tests.http.walkthrough import free_port, run_walkthrough, server_process
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.e2e

TOKEN = "container-test-token-0123456789"


def with_port(argv: list[str], port: int) -> list[str]:
    return [str(port) if a == "8765" else a.replace(":8765/", f":{port}/") for a in argv]


def container_env(config_dir: Path, token: str | None) -> dict[str, str]:
    """The image's ENV, then compose's environment with ${VAR:-default} defaults applied."""
    env = {"PATH": os.environ["PATH"], **dockerfile_env(), "IAC_CODE_CONFIG_DIR": str(config_dir)}
    for name, value in compose()["services"]["iac-code"]["environment"].items():
        if match := re.fullmatch(r"\$\{(\w+):-(.*)\}", value):
            env[name] = match.group(2)
        elif re.fullmatch(r"\$\{(\w+):\?.*\}", value):
            if token is not None:
                env[name] = token
        else:
            env[name] = value
    return env


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    port = free_port()
    argv = with_port(exec_form(dockerfile()["ENTRYPOINT"][-1]), port)
    argv += with_port(exec_form(dockerfile()["CMD"][-1]), port)
    assert argv[0] == "iac-code"
    stderr_path = tmp_path / "stderr.log"
    env = container_env(tmp_path / "data", TOKEN)
    with server_process(argv[1:], env, stderr_path) as (base, process):
        yield base, process, stderr_path


def ready_answer(http: httpx.Client) -> httpx.Response:
    """/readyz once the agent has loaded: `initialize` is answered before it has, so on a
    busy machine the first probe can still say "not ready" (503), as it should."""
    deadline = time.monotonic() + PATIENCE
    while (answer := http.get("/readyz")).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer


def test_the_container_command_serves_with_the_token_required(
    server: tuple[str, subprocess.Popen[bytes], Path],
) -> None:
    base, process, stderr_path = server
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    with httpx.Client(base_url=base, timeout=10) as http:
        anonymous = http.post("/acp", json=init)
        opened = http.post("/acp", json=init, headers={"Authorization": f"Bearer {TOKEN}"})
        ready = ready_answer(http)
    assert anonymous.status_code == 401
    assert opened.status_code == 200 and opened.headers["acp-connection-id"]
    assert ready.json() == {"status": "ready"}

    health = compose()["services"]["iac-code"]["healthcheck"]["test"][1:]
    port = base.rsplit(":", 1)[1]
    probe = subprocess.run(
        [sys.executable, *with_port(health, int(port))[1:]], timeout=30, check=False
    )
    assert probe.returncode == 0

    process.send_signal(signal.SIGTERM)
    process.wait(15)
    log = stderr_path.read_text()
    assert TOKEN not in log
    assert "WITHOUT A TOKEN" not in log
    assert '"path": "/acp", "status": 401' in log
    assert (stderr_path.parent / "data" / "iac-code.db").is_file()  # on the volume's path


def test_the_container_command_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    command = exec_form(dockerfile()["CMD"][-1])
    result = subprocess.run(
        [IAC_CODE, *with_port(command, free_port())],
        env=container_env(tmp_path / "data", None),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "IACCODE_ACP_HTTP_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr


def workspace_mount() -> tuple[str, str]:
    """(host source, container target) of compose's bind mount for the sessions' project."""
    for volume in compose()["services"]["iac-code"]["volumes"]:
        source, _, target = volume.partition(":")
        if source.startswith(("./", "/")):
            return source, target
    raise AssertionError("compose mounts no project directory")


def test_the_container_serves_a_mounted_workspace_for_the_walkthrough(
    server: tuple[str, subprocess.Popen[bytes], Path],
) -> None:
    """The product documents' walkthrough creates its session in /workspace: the image makes
    that directory (the agent's, its working directory) and compose mounts ./workspace on it.
    Without Docker, a directory of the test's stands in for the mount, and docs/http.md's
    walkthrough runs against the container's command with the token compose requires."""
    source, target = workspace_mount()
    assert (source, target) == ("./workspace", "/workspace")
    docker = dockerfile()
    assert docker["WORKDIR"][-1] == target
    assert any(f"chown agent:agent {target}" in run for run in docker["RUN"])

    base, _process, stderr_path = server
    mounted = stderr_path.parent / source  # compose resolves ./ against the project dir
    mounted.mkdir()
    result = run_walkthrough(
        f"{base}/acp", cwd=stderr_path.parent, token=TOKEN, workdir=str(mounted)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"id":3,"result":{"stopReason":"end_turn"' in result.stdout
    assert (mounted / "hello.txt").read_text() == "Hello from curl"


def interpolated(environment: dict[str, str], shell: dict[str, str]) -> dict[str, str]:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}` against the shell's
    variables (`:-` and `:?` treat an empty variable as unset, as compose does)."""

    def one(match: re.Match[str]) -> str:
        name, how, rest = match.group(1), match.group(2), match.group(3)
        value = shell.get(name, "")
        if how == ":-" and not value:
            return rest
        if how == ":?" and not value:
            raise AssertionError(f"compose refuses to start without {name}: {rest}")
        return value

    pattern = re.compile(r"\$\{(\w+)(:-|:\?)?([^}]*)\}")
    return {name: pattern.sub(one, value) for name, value in environment.items()}


MODEL_SERVICES = [
    name
    for name, service in compose()["services"].items()
    if "IAC_CODE_MODEL" in service.get("environment", {})
]


@pytest.mark.parametrize("service", MODEL_SERVICES)
@pytest.mark.parametrize(
    ("provider", "model"), [("openai", "gpt-4.1"), ("anthropic", "claude-sonnet-4-5")]
)
def test_finding_13_compose_leaves_the_model_to_the_chosen_provider(
    tmp_path: Path, service: str, provider: str, model: str
) -> None:
    """`IAC_CODE_PROVIDER=openai docker compose up` asks OpenAI for its own default model,
    not for a Claude model compose named."""
    environment = compose()["services"][service]["environment"]
    assert environment["IAC_CODE_MODEL"] == "${IAC_CODE_MODEL:-}"
    shell = {"IAC_CODE_PROVIDER": provider, "IAC_CODE_API_KEY": "k", "IACCODE_ACP_HTTP_TOKEN": "t"}
    env = interpolated(environment, shell)
    settings = load_settings({**env, "IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (settings.provider, settings.model) == (provider, model)
    assert len(MODEL_SERVICES) == 3  # iac-code and the two replicas: none is left out
