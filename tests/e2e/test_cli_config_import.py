"""`iac-code config import`: the real binary on a fixture of the reference system's files."""

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.e2e.conftest import IAC_CODE

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parents[1] / "fixtures" / "reference_config"
KEYS = ("sk-fixture-dashscope-0123456789", "sk-fixture-openai-abcdef", "ghp_fixture")


def config_import(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IAC_CODE, "config", "import", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], **env},
        check=False,
    )


def shows_no_key(result: subprocess.CompletedProcess[str]) -> bool:
    return not any(key in result.stdout + result.stderr for key in KEYS)


def test_import_writes_provider_model_base_url_and_key(tmp_path: Path) -> None:
    result = config_import("--from", str(FIXTURE), env={"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    written = tmp_path / "config.toml"
    config = tomllib.loads(written.read_text())
    assert config["provider"] == "dashscope"
    assert config["model"] == "qwen3-coder-plus"
    dashscope = config["providers"]["dashscope"]
    assert dashscope["base_url"] == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert dashscope["api_key"] == KEYS[0]
    assert config["providers"]["my-vllm"]["base_url"] == "http://localhost:8000/v1"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert "key for dashscope (from .credentials.yml)" in result.stdout
    assert "skipped provider 'ollama'" in result.stdout
    assert shows_no_key(result)


def test_a_second_import_is_refused_then_merged_with_force(tmp_path: Path) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path)}
    (tmp_path / "config.toml").write_text('max_tokens = 4096\nmodel = "claude-sonnet-4-5"\n')
    refused = config_import("--from", str(FIXTURE), env=env)
    assert refused.returncode == 1
    assert "--force" in refused.stderr
    assert tomllib.loads((tmp_path / "config.toml").read_text())["model"] == "claude-sonnet-4-5"
    forced = config_import("--from", str(FIXTURE), "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    merged = tomllib.loads((tmp_path / "config.toml").read_text())
    assert (merged["max_tokens"], merged["model"]) == (4096, "qwen3-coder-plus")
    assert shows_no_key(refused) and shows_no_key(forced)


def test_dry_run_masks_keys_and_writes_nothing(tmp_path: Path) -> None:
    result = config_import(
        "--from", str(FIXTURE), "--dry-run", env={"IAC_CODE_CONFIG_DIR": str(tmp_path)}
    )
    assert result.returncode == 0, result.stderr
    assert 'api_key = "********"' in result.stdout
    assert not (tmp_path / "config.toml").exists()
    assert shows_no_key(result)


def test_the_default_source_is_the_shared_config_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home / ".iac-code")
    result = config_import(env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert tomllib.loads((home / ".iac-code" / "config.toml").read_text())["model"] == (
        "qwen3-coder-plus"
    )


def test_invalid_yaml_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "reference"
    source.mkdir()
    (source / "settings.yml").write_text("provider: dashscope\n")
    (source / ".credentials.yml").write_text("dashscope:\n  api_key: sk-broken-999\n\tbad\n")
    result = config_import("--from", str(source), env={"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert f"{source / '.credentials.yml'}: invalid YAML at line 3" in result.stderr
    assert "sk-broken-999" not in result.stdout + result.stderr
    assert not (tmp_path / "config.toml").exists()
