"""Which provider serves, with which key and address, and which models are offered."""

from pathlib import Path

import pytest

from bootstrap.offered_models import offered
from bootstrap.settings import SettingsError, load_settings


def load(tmp_path: Path, config: str = "", **env: str):  # type: ignore[no-untyped-def]
    if config:
        (tmp_path / "config.toml").write_text(config)
    return load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), **env})


@pytest.mark.parametrize(
    "spelling", ["openai_compatible", "OpenAI-Compatible", "openai compatible", "OPENAICOMPATIBLE"]
)
def test_the_provider_name_ignores_case_spaces_dashes_and_underscores(
    tmp_path: Path, spelling: str
) -> None:
    settings = load(
        tmp_path, IAC_CODE_PROVIDER=spelling, IAC_CODE_BASE_URL="http://h/v1", IAC_CODE_MODEL="m"
    )
    assert settings.provider == "openai_compatible"


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-haiku-4-5", "anthropic"),
        ("gpt-4.1", "openai"),
        ("o4-mini", "openai"),
        ("qwen3-coder-plus", "dashscope"),
        ("deepseek-reasoner", "deepseek"),
        ("mystery-model", "anthropic"),
    ],
)
def test_without_a_provider_the_models_prefix_chooses(
    tmp_path: Path, model: str, provider: str
) -> None:
    assert load(tmp_path, IAC_CODE_MODEL=model).provider == provider


def test_the_environment_wins_over_config_toml_which_wins_over_the_prefix(
    tmp_path: Path,
) -> None:
    config = 'provider = "deepseek"\nmodel = "qwen-plus"\n'
    assert load(tmp_path, config).provider == "deepseek"
    assert load(tmp_path, config, IAC_CODE_PROVIDER="dashscope").provider == "dashscope"


def test_each_provider_has_its_default_model_and_key_variable(tmp_path: Path) -> None:
    settings = load(tmp_path, IAC_CODE_PROVIDER="dashscope", DASHSCOPE_API_KEY="k-qwen")
    assert (settings.model, settings.api_key, settings.key_hint) == (
        "qwen3-coder-plus",
        "k-qwen",
        "DASHSCOPE_API_KEY",
    )
    assert settings.base_url == "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
    assert settings.has_credentials


def test_the_key_comes_from_iac_code_then_the_providers_variable_then_config(
    tmp_path: Path,
) -> None:
    config = '[providers.deepseek]\napi_key = "from-file"\n'
    env = {"IAC_CODE_PROVIDER": "deepseek"}
    assert load(tmp_path, config, **env).api_key == "from-file"
    assert load(tmp_path, config, **env, DEEPSEEK_API_KEY="from-var").api_key == "from-var"
    both = load(tmp_path, config, **env, DEEPSEEK_API_KEY="v", IAC_CODE_API_KEY="ours")
    assert both.api_key == "ours"
    assert "from-file" not in repr(load(tmp_path, config, **env))


def test_a_table_may_name_another_key_variable_and_address(tmp_path: Path) -> None:
    config = (
        '[providers.dashscope]\napi_key_env = "MY_QWEN"\n'
        'base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"\n'
    )
    settings = load(tmp_path, config, IAC_CODE_PROVIDER="dashscope", MY_QWEN="k")
    assert (settings.api_key, settings.key_hint) == ("k", "MY_QWEN")
    assert settings.base_url == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    moved = load(tmp_path, config, IAC_CODE_PROVIDER="dashscope", IAC_CODE_BASE_URL="http://x")
    assert moved.base_url == "http://x"


def test_a_local_server_needs_an_address_and_a_model_but_no_key(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="IAC_CODE_BASE_URL"):
        load(tmp_path, IAC_CODE_PROVIDER="openai_compatible", IAC_CODE_MODEL="llama3")
    with pytest.raises(SettingsError, match="IAC_CODE_MODEL"):
        load(tmp_path, IAC_CODE_PROVIDER="openai_compatible", IAC_CODE_BASE_URL="http://h/v1")
    local = load(
        tmp_path,
        IAC_CODE_PROVIDER="openai_compatible",
        IAC_CODE_BASE_URL="http://localhost:11434/v1",
        IAC_CODE_MODEL="qwen2.5-coder:7b",
    )
    assert local.has_credentials and local.api_key is None
    assert [m.id for _, m in offered(local)] == ["qwen2.5-coder:7b"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("[providers.nope]\n", "unknown provider"),
        ("[providers.openai]\ncolour = 1\n", "unknown key 'colour'"),
        ('[providers.openai]\nbase_url = ""\n', "base_url must be a non-empty string"),
        ("[providers.openai]\nmodels = 3\n", "models must be a list"),
        ("[providers.openai]\nmodels = [{ name = 'x' }]\n", "a table with an `id`"),
        ("[providers.openai]\nmodels = [{ id = 'x', speed = 1 }]\n", "unknown key 'speed'"),
        ('provider = "openia"\n', "config.toml provider"),
    ],
)
def test_bad_provider_tables_are_refused_naming_the_file(
    tmp_path: Path, config: str, message: str
) -> None:
    with pytest.raises(SettingsError, match=message) as caught:
        load(tmp_path, config)
    if "provider =" not in config:
        assert "config.toml" in str(caught.value)


def test_other_configured_providers_with_a_key_offer_their_models_too(tmp_path: Path) -> None:
    config = (
        '[providers.dashscope]\nbase_url = "http://127.0.0.1:9/v1"\n'
        "models = ['qwen3-coder-plus', { id = 'qwen-local', context_window = 32768, "
        "max_output = 4096, input_price = 0.2, output_price = 0.6 }]\n"
        "[providers.deepseek]\n"  # configured, but no key: not offered
    )
    settings = load(
        tmp_path,
        config,
        IAC_CODE_MODELS="claude-sonnet-4-5",
        ANTHROPIC_API_KEY="a",
        DASHSCOPE_API_KEY="q",
    )
    served = [(e.profile.id, m.id) for e, m in offered(settings)]
    assert served == [
        ("anthropic", "claude-sonnet-4-5"),
        ("dashscope", "qwen3-coder-plus"),
        ("dashscope", "qwen-local"),
    ]
    local = dict(((m.id, m) for _, m in offered(settings)))["qwen-local"]
    assert (local.context_window, local.max_output_tokens) == (32_768, 4_096)
    assert local.prices is not None and local.prices.input == 0.2


def test_a_server_without_a_profile_is_the_openai_compatible_one(tmp_path: Path) -> None:
    config = (
        'provider = "my-vllm"\nmodel = "qwen2.5-coder"\n'
        '[providers.my-vllm]\nbase_url = "http://gpu-box:8000/v1"\napi_key = "tok"\n'
    )
    settings = load(tmp_path, config)
    assert (settings.provider, settings.base_url, settings.api_key) == (
        "openai_compatible",
        "http://gpu-box:8000/v1",
        "tok",
    )
