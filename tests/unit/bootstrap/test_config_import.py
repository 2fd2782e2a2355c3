import io
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bootstrap.config_import import MASK, ConfigImportError, import_config, merge, read_yaml
from bootstrap.config_translation import provider_id, translate

FIXTURE = Path(__file__).parents[2] / "fixtures" / "reference_config"
KEYS = ("sk-fixture-dashscope-0123456789", "sk-fixture-openai-abcdef", "ghp_fixture")


def fixture_translation() -> Any:
    return translate(read_yaml(FIXTURE / "settings.yml"), read_yaml(FIXTURE / ".credentials.yml"))


def run(source: Path, config_dir: Path, **flags: bool) -> tuple[int, str]:
    out = io.StringIO()
    code = import_config(
        source,
        config_dir,
        dry_run=flags.get("dry_run", False),
        force=flags.get("force", False),
        out=out,
    )
    return code, out.getvalue()


def reference(tmp_path: Path, settings: str | None, credentials: str | None = None) -> Path:
    source = tmp_path / "reference"
    source.mkdir()
    if settings is not None:
        (source / "settings.yml").write_text(settings)
    if credentials is not None:
        (source / ".credentials.yml").write_text(credentials)
    return source


def test_the_fixture_becomes_providers_a_model_and_keys() -> None:
    assert fixture_translation().config == {
        "provider": "dashscope",
        "model": "qwen3-coder-plus",
        "providers": {
            "dashscope": {
                "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1",
                "models": ["qwen3-coder-plus", "qwen-max"],
                "api_key": "sk-fixture-dashscope-0123456789",
            },
            "deepseek": {"api_key_env": "MY_DEEPSEEK_KEY"},
            "my-vllm": {
                "base_url": "http://localhost:8000/v1",
                "models": [
                    {
                        "id": "Qwen/Qwen2.5-Coder-32B-Instruct",
                        "name": "Qwen coder (local)",
                        "context_window": 32768,
                        "max_output": 8192,
                    }
                ],
                "api_key_env": "VLLM_TOKEN",
            },
            "openai": {"api_key": "sk-fixture-openai-abcdef"},
        },
    }


def test_it_says_what_it_took_and_skipped_and_never_a_key() -> None:
    result = fixture_translation()
    assert "key for dashscope (from .credentials.yml)" in result.took
    assert "key for openai (from .credentials.yml)" in result.took
    skipped = "\n".join(result.skipped)
    assert "'ollama': not one we know and no base_url" in skipped
    assert "theme" in skipped and "language" in skipped
    assert "temperature" in skipped
    assert "github_token" in skipped
    for key in KEYS:
        assert key not in "\n".join(result.took + result.skipped)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("DashScope", "dashscope"),
        ("qwen", "dashscope"),
        ("Tongyi", "dashscope"),
        ("OpenAI-Compatible", "openai_compatible"),
        ("deep_seek", "deepseek"),
        ("Claude", "anthropic"),
        ("My vLLM", "my_vllm"),
        ("my-vllm", "my-vllm"),
    ],
)
def test_provider_names_as_people_write_them(name: str, expected: str) -> None:
    assert provider_id(name) == expected


@pytest.mark.parametrize(
    "credentials",
    [
        {"DASHSCOPE_API_KEY": "k1"},
        {"QWEN_API_KEY": "k1"},
        {"dashscope": "k1"},
        {"dashscope": {"api_key": "k1"}},
        {"providers": {"DashScope": {"key": "k1"}}},
        {"api_key": "k1"},  # the active provider's
        {"IAC_CODE_API_KEY": "k1"},
    ],
)
def test_every_form_of_a_credentials_entry(credentials: dict[str, Any]) -> None:
    result = translate({"provider": "dashscope"}, credentials)
    assert result.config["providers"] == {"dashscope": {"api_key": "k1"}}


def test_a_key_variable_named_in_settings_finds_its_provider() -> None:
    settings = {"providers": {"lab": {"base_url": "http://lab:8000/v1", "api_key_env": "LAB_KEY"}}}
    result = translate(settings, {"LAB_KEY": "k1"})
    assert result.config["providers"]["lab"] == {
        "base_url": "http://lab:8000/v1",
        "api_key_env": "LAB_KEY",
        "api_key": "k1",
    }
    assert result.config["provider"] == "lab"  # the only one listed


def test_a_key_written_as_a_variable_reference_becomes_api_key_env() -> None:
    result = translate({}, {"deepseek": {"api_key": "${DS_KEY}"}, "openai": "$OAI"})
    assert result.config["providers"] == {
        "deepseek": {"api_key_env": "DS_KEY"},
        "openai": {"api_key_env": "OAI"},
    }


def test_keys_that_fit_no_provider_are_skipped() -> None:
    result = translate(
        {"provider": "nowhere"},
        {"api_key": "k1", "mystery": {"api_key": "k2"}, "openai": "", "demo": "k3"},
    )
    assert result.config == {}
    assert len(result.skipped) == 5
    assert "active provider 'nowhere'" in result.skipped[0]


def test_top_level_values_belong_to_the_active_provider() -> None:
    settings = {
        "active_provider": "openai_compatible",
        "default_model": "qwen2.5-coder:32b",
        "base_url": "http://localhost:11434/v1",
        "models": {"qwen2.5-coder:32b": {"context_window": 32768}, "llama3": None},
    }
    assert translate(settings, {}).config == {
        "provider": "openai_compatible",
        "model": "qwen2.5-coder:32b",
        "providers": {
            "openai_compatible": {
                "base_url": "http://localhost:11434/v1",
                "models": [{"id": "qwen2.5-coder:32b", "context_window": 32768}, "llama3"],
            }
        },
    }


def test_top_level_values_without_an_active_provider_are_skipped() -> None:
    result = translate({"base_url": "http://x", "api_key": "k"}, {})
    assert result.config == {}
    assert [s.split(":")[0] for s in result.skipped] == [
        "settings.yml base_url",
        "settings.yml api_key",
    ]


def test_the_active_providers_model_when_none_at_the_top() -> None:
    settings = {"provider": "deepseek", "providers": {"deepseek": {"model": "deepseek-reasoner"}}}
    assert translate(settings, {}).config == {"provider": "deepseek", "model": "deepseek-reasoner"}


def test_a_providers_model_our_profile_does_not_know_is_offered() -> None:
    settings = {"providers": {"dashscope": {"model": "qwen3-max-preview"}}}
    assert translate(settings, {}).config["providers"] == {
        "dashscope": {"models": ["qwen3-max-preview"]}
    }


def test_providers_as_a_list_and_bad_model_entries() -> None:
    settings = {
        "providers": [
            {
                "name": "Lab",
                "base_url": "http://lab/v1",
                "models": [{"name": "m", "max_tokens": "x"}, {}],
            },
            {"base_url": "http://anonymous/v1"},
            "nonsense",
        ]
    }
    result = translate(settings, {})
    assert result.config["providers"] == {"lab": {"base_url": "http://lab/v1", "models": ["m"]}}
    skipped = "\n".join(result.skipped)
    assert "m's max_output 'x' is not a number" in skipped
    assert "a model entry without an id" in skipped
    assert skipped.count("an entry without an id or name") == 2


def test_merge_keeps_other_values_and_the_imported_win() -> None:
    existing = {
        "model": "old",
        "max_tokens": 4096,
        "providers": {"dashscope": {"api_key_env": "MINE", "base_url": "old"}},
        "catalogue": {"m": {"context_window": 1}},
    }
    imported = {"model": "new", "providers": {"dashscope": {"base_url": "new"}, "openai": {}}}
    assert merge(existing, imported) == {
        "model": "new",
        "max_tokens": 4096,
        "providers": {"dashscope": {"api_key_env": "MINE", "base_url": "new"}, "openai": {}},
        "catalogue": {"m": {"context_window": 1}},
    }


def test_invalid_yaml_names_the_file_and_line_but_not_its_text(tmp_path: Path) -> None:
    path = tmp_path / ".credentials.yml"
    path.write_text("dashscope:\n  api_key: sk-secret-123\n bad: [unclosed\n")
    with pytest.raises(ConfigImportError) as caught:
        read_yaml(path)
    message = str(caught.value)
    assert str(path) in message and "line 3" in message
    assert "sk-secret-123" not in message


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"- a list\n", "expected a mapping"),
        (b"\xff\xfe", "not UTF-8"),
        (b"a: *nowhere\n", "line 1"),
    ],
)
def test_files_that_are_not_settings(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "settings.yml"
    path.write_bytes(content)
    with pytest.raises(ConfigImportError, match=problem):
        read_yaml(path)


def test_an_empty_file_is_no_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.yml"
    path.write_text("# nothing yet\n")
    assert read_yaml(path) == {}


def test_import_writes_a_private_config_toml(tmp_path: Path) -> None:
    code, out = run(FIXTURE, tmp_path / "config")
    written = tmp_path / "config" / "config.toml"
    assert code == 0
    assert tomllib.loads(written.read_text()) == fixture_translation().config
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert f"wrote {written}" in out
    assert not any(key in out for key in KEYS)
    assert [p.name for p in written.parent.iterdir()] == ["config.toml"]  # no temporary left


def test_an_existing_config_is_kept_unless_forced_then_merged(tmp_path: Path) -> None:
    written = tmp_path / "config.toml"
    before = '# mine\nmax_tokens = 4096\nmodel = "claude-sonnet-4-5"\n'
    written.write_text(before)
    refused, _ = run(FIXTURE, tmp_path)
    assert refused == 1
    assert written.read_text() == before
    code, _ = run(FIXTURE, tmp_path, force=True)
    merged = tomllib.loads(written.read_text())
    assert code == 0
    assert merged["max_tokens"] == 4096
    assert merged["model"] == "qwen3-coder-plus"
    assert merged["providers"]["dashscope"]["api_key"] == KEYS[0]
    assert stat.S_IMODE(written.stat().st_mode) == 0o600


def test_dry_run_shows_masked_keys_and_writes_nothing(tmp_path: Path) -> None:
    code, out = run(FIXTURE, tmp_path, dry_run=True)
    assert code == 0
    assert not (tmp_path / "config.toml").exists()
    shown = out.split("keys masked:\n", 1)[1]
    assert tomllib.loads(shown)["providers"]["dashscope"]["api_key"] == MASK
    assert not any(key in out for key in KEYS)


def test_dry_run_over_an_existing_file_says_a_real_run_needs_force(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("max_tokens = 4096\n")
    code, out = run(FIXTURE, tmp_path, dry_run=True)
    assert code == 0 and "needs --force" in out
    _, merged = run(FIXTURE, tmp_path, dry_run=True, force=True)
    assert "max_tokens = 4096" in merged
    assert (tmp_path / "config.toml").read_text() == "max_tokens = 4096\n"


def test_force_over_an_invalid_config_toml_refuses_and_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("model = \n")
    with pytest.raises(ConfigImportError, match="cannot merge into it"):
        run(FIXTURE, tmp_path, force=True)
    assert (tmp_path / "config.toml").read_text() == "model = \n"


def test_credentials_alone_are_enough(tmp_path: Path) -> None:
    source = reference(tmp_path, None, "DEEPSEEK_API_KEY: k1\n")
    code, out = run(source, tmp_path / "config")
    assert code == 0
    assert tomllib.loads((tmp_path / "config" / "config.toml").read_text()) == {
        "providers": {"deepseek": {"api_key": "k1"}}
    }
    assert "settings.yml" not in out.splitlines()[0]


def test_nothing_to_take_writes_nothing(tmp_path: Path) -> None:
    source = reference(tmp_path, "theme: dark\n")
    code, out = run(source, tmp_path / "config")
    assert code == 1 and "nothing to import" in out
    assert not (tmp_path / "config").exists()


def test_a_directory_without_the_files_or_no_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigImportError, match=r"neither settings\.yml nor \.credentials\.yml"):
        run(reference(tmp_path, None), tmp_path / "config")
    with pytest.raises(ConfigImportError, match="no such directory"):
        run(tmp_path / "missing", tmp_path / "config")
