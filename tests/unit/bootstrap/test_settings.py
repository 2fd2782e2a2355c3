from pathlib import Path

import pytest

from bootstrap.settings import SettingsError, load_settings


def test_defaults(tmp_path: Path) -> None:
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert settings.provider == "anthropic"
    assert settings.api_key is None
    assert not settings.has_credentials
    assert settings.database_url == f"sqlite+aiosqlite:///{tmp_path / 'iac-code.db'}"
    assert settings.max_turn_requests == 50
    assert (settings.max_retries, settings.provider_retry_seconds) == (4, 120.0)


def test_iac_code_names_win_over_anthropic_ones(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_API_KEY": "ours",
            "ANTHROPIC_API_KEY": "theirs",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        }
    )
    assert settings.api_key == "ours"
    assert settings.base_url == "http://127.0.0.1:1"
    assert "ours" not in repr(settings)


def test_config_file_is_read_and_environment_wins(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'provider = "demo"\nmodel = "m-file"\nmax_turn_requests = 7\nmodels = ["a", "b"]\n'
    )
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MODEL": "m-env"})
    assert settings.provider == "demo"
    assert settings.model == "m-env"
    assert settings.max_turn_requests == 7
    assert settings.models == ("a", "b")
    assert settings.has_credentials  # demo needs no key


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"IAC_CODE_PROVIDER": "openia"}, "IAC_CODE_PROVIDER"),
        ({"IAC_CODE_MAX_TURN_REQUESTS": "zero"}, "max_turn_requests"),
        ({"IAC_CODE_MAX_TURN_REQUESTS": "0"}, "max_turn_requests"),
        ({"IAC_CODE_DEFAULT_MODE": "yolo"}, "default_mode"),
        ({"IAC_CODE_DEFAULT_MODE": "bypass"}, "IAC_CODE_ALLOW_BYPASS=1"),
        ({"IAC_CODE_ALLOW_BYPASS": "maybe"}, "allow_bypass"),
        ({"IAC_CODE_THOUGHT_LEVEL": "max"}, "thought_level"),
        ({"IAC_CODE_MAX_IMAGE_BYTES": "0"}, "max_image_bytes"),
        ({"IAC_CODE_PROVIDER_RETRY_SECONDS": "0"}, "provider_retry_seconds"),
        ({"IAC_CODE_PROVIDER_RETRY_SECONDS": "soon"}, "provider_retry_seconds"),
        ({"IAC_CODE_MAX_TASKS": "0"}, "max_tasks"),
        ({"IAC_CODE_MAX_SUBAGENTS": "0"}, "max_subagents"),
        ({"IAC_CODE_TASK_FOLLOW_UP": "sometimes"}, "task_follow_up"),
    ],
)
def test_bad_values_are_reported_by_name(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), **env})


def test_modes_thinking_and_images_settings(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_ALLOW_BYPASS": "yes",
            "IAC_CODE_DEFAULT_MODE": "bypass",
            "IAC_CODE_THOUGHT_LEVEL": "medium",
            "IAC_CODE_MAX_IMAGE_BYTES": "1024",
        }
    )
    assert (settings.allow_bypass, settings.default_mode) == (True, "bypass")
    assert (settings.thought_level, settings.max_image_bytes) == ("medium", 1024)
    defaults = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (defaults.allow_bypass, defaults.default_mode, defaults.thought_level) == (
        False,
        "default",
        "off",
    )


def test_the_catalogue_offers_the_configured_model_first_when_it_is_not_listed(
    tmp_path: Path,
) -> None:
    from bootstrap.offered_models import build_catalog

    settings = load_settings(
        {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MODEL": "x", "IAC_CODE_MODELS": "a, b"}
    )
    assert [m.id for m in build_catalog(settings).models] == ["x", "a", "b"]
    listed = load_settings(
        {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MODEL": "claude-opus-4-1"}
    )
    catalog = build_catalog(listed)
    assert catalog.models[0].id == "claude-sonnet-4-5" and len(catalog.models) == 6
    assert catalog.model("claude-opus-4-1").name == "Claude Opus 4.1"
    assert not catalog.model("claude-3-5-haiku-latest").thinking
    demo = build_catalog(
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER": "demo"})
    )
    assert [m.id for m in demo.models] == ["demo"]
    assert [m.id for m in build_catalog(settings).modes] == ["default", "accept_edits", "plan"]


def test_broken_config_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("provider = ")
    with pytest.raises(SettingsError, match=r"config\.toml"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})


def test_compaction_settings_from_file_and_environment(tmp_path: Path) -> None:
    defaults = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (defaults.compact_at, defaults.compact_keep_turns) == (0.85, 2)
    (tmp_path / "config.toml").write_text("compact_at = 0.5\ncompact_keep_turns = 4\n")
    from_file = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (from_file.compact_at, from_file.compact_keep_turns) == (0.5, 4)
    from_env = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_COMPACT_AT": "1",
            "IAC_CODE_COMPACT_KEEP_TURNS": "1",
        }
    )
    assert (from_env.compact_at, from_env.compact_keep_turns) == (1.0, 1)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("IAC_CODE_COMPACT_AT", "0"),
        ("IAC_CODE_COMPACT_AT", "-0.5"),
        ("IAC_CODE_COMPACT_AT", "1.01"),
        ("IAC_CODE_COMPACT_AT", "nan"),
        ("IAC_CODE_COMPACT_AT", "most"),
        ("IAC_CODE_COMPACT_KEEP_TURNS", "0"),
        ("IAC_CODE_COMPACT_KEEP_TURNS", "two"),
    ],
)
def test_bad_compaction_settings_are_refused(tmp_path: Path, name: str, value: str) -> None:
    setting = name.removeprefix("IAC_CODE_").lower()
    with pytest.raises(SettingsError, match=setting):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), name: value})


CATALOGUE = """
[catalogue."claude-sonnet-4-5"]
context_window = 1000000
max_output_tokens = 64000
input_price = 6      # per million tokens; a whole number is a price too
cache_write_price = 7.5
name = "Claude Sonnet 4.5 (1M)"

[catalogue."local-model"]
name = "Local"
context_window = 32000
thinking = false
input_price = 0.5
output_price = 1.5
currency = "EUR"
"""


def test_config_catalogue_merges_over_the_built_in_one_and_adds_models(tmp_path: Path) -> None:
    from bootstrap.offered_models import build_catalog

    (tmp_path / "config.toml").write_text(CATALOGUE)
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    catalog = build_catalog(settings)
    sonnet = catalog.model("claude-sonnet-4-5")
    assert (sonnet.name, sonnet.context_window) == ("Claude Sonnet 4.5 (1M)", 1_000_000)
    assert sonnet.prices is not None
    assert (sonnet.prices.input, sonnet.prices.output, sonnet.prices.cache_write) == (6, 15, 7.5)
    assert [m.id for m in catalog.models][-1] == "local-model"  # offered in the model option
    local = catalog.model("local-model")
    assert (local.name, local.context_window, local.thinking) == ("Local", 32_000, False)
    assert local.prices is not None and local.prices.currency == "EUR"

    chosen = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_MODEL": "local-model",
            "IAC_CODE_MODELS": "claude-haiku-4-5",
        }
    )
    assert [m.name for m in build_catalog(chosen).models] == ["Local", "Claude Haiku 4.5"]


@pytest.mark.parametrize(
    ("toml", "names"),
    [
        ('[catalogue."m"]\ncontext_windw = 5', ['[catalogue."m"]', "context_windw", "unknown"]),
        ('[catalogue."m"]\ncontext_window = "big"', ["context_window", "'big'"]),
        ('[catalogue."m"]\ncontext_window = 0', ["context_window", "positive"]),
        ('[catalogue."m"]\nmax_output_tokens = -1', ["max_output_tokens", "positive"]),
        ('[catalogue."m"]\ncontext_window = 1.5', ["context_window", "whole number"]),
        ('[catalogue."m"]\ncontext_window = true', ["context_window"]),
        ('[catalogue."claude-opus-4-5"]\ninput_price = -1', ["claude-opus-4-5", "input_price"]),
        ('[catalogue."claude-opus-4-5"]\noutput_price = "5"', ["output_price", "number"]),
        ('[catalogue."claude-opus-4-5"]\ncache_read_price = nan', ["cache_read_price"]),
        ('[catalogue."claude-opus-4-5"]\ncurrency = ""', ["currency", "non-empty"]),
        ('[catalogue."claude-opus-4-5"]\nthinking = "no"', ["thinking", "true or false"]),
        ('[catalogue."m"]\ninput_price = 1', ['[catalogue."m"]', "output_price"]),
        ('[catalogue."demo"]\ncurrency = "EUR"', ['[catalogue."demo"]', "input_price"]),
        ("catalogue = 3", ["catalogue must be a table"]),
        ("[catalogue]\nm = 3", ['[catalogue."m"]', "table"]),
    ],
)
def test_bad_catalogue_tables_are_refused_by_file_table_and_key(
    tmp_path: Path, toml: str, names: list[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(toml)
    with pytest.raises(SettingsError) as caught:
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    message = str(caught.value)
    assert message.startswith(f"{config}: ")
    for name in names:
        assert name in message


def test_lease_settings_from_the_environment(tmp_path: Path) -> None:
    defaults = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (defaults.lease_seconds, defaults.lease_poll_seconds) == (30.0, 0.5)
    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_LEASE_SECONDS": "2",
            "IAC_CODE_LEASE_POLL_SECONDS": "0.05",
        }
    )
    assert (settings.lease_seconds, settings.lease_poll_seconds) == (2.0, 0.05)


@pytest.mark.parametrize("name", ["IAC_CODE_LEASE_SECONDS", "IAC_CODE_LEASE_POLL_SECONDS"])
@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_bad_lease_settings_are_refused(tmp_path: Path, name: str, value: str) -> None:
    setting = name.removeprefix("IAC_CODE_").lower()
    with pytest.raises(SettingsError, match=setting):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), name: value})


@pytest.mark.parametrize("blank", ["", "  "])
def test_finding_13_an_empty_model_means_the_providers_default(tmp_path: Path, blank: str) -> None:
    """Compose passes `IAC_CODE_MODEL: ${IAC_CODE_MODEL:-}`: set, but empty, when the user
    named no model. Empty (or blank) is unset, like every IAC_CODE_ variable."""
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MODEL": blank}
    assert load_settings({**env, "IAC_CODE_PROVIDER": "openai"}).model == "gpt-4.1"
    assert load_settings({**env, "IAC_CODE_PROVIDER": "deepseek"}).model == "deepseek-chat"
    assert load_settings({**env, "IAC_CODE_MAX_RETRIES": blank}).max_retries == 4


def test_the_provider_retry_budget_is_read(tmp_path: Path) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER_RETRY_SECONDS": "30.5"}
    assert load_settings(env).provider_retry_seconds == 30.5


def test_background_task_settings(tmp_path: Path) -> None:
    defaults = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (defaults.max_tasks, defaults.task_follow_up) == (8, False)
    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_MAX_TASKS": "3",
            "IAC_CODE_TASK_FOLLOW_UP": "1",
        }
    )
    assert (settings.max_tasks, settings.task_follow_up) == (3, True)


def test_the_sub_agent_limit_is_read(tmp_path: Path) -> None:
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}).max_subagents == 3
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MAX_SUBAGENTS": "5"}
    assert load_settings(env).max_subagents == 5


def test_the_sandbox_defaults_to_the_workspace_no_network_and_no_ceiling(tmp_path: Path) -> None:
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (settings.sandbox, settings.sandbox_ceiling) == ("workspace-write", "off")
    assert (settings.sandbox_network, settings.sandbox_allow) == ("none", ())


def test_the_sandbox_settings_are_read(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_SANDBOX": "read-only",
            "IAC_CODE_SANDBOX_CEILING": "workspace-write",
            "IAC_CODE_SANDBOX_NETWORK": "full",
            "IAC_CODE_SANDBOX_ALLOW": " pypi.org:443, files.pythonhosted.org ,",
            "IAC_CODE_SANDBOX_MAX_FILE_BYTES": "1048576",
        }
    )
    assert (settings.sandbox, settings.sandbox_ceiling) == ("read-only", "workspace-write")
    assert settings.sandbox_network == "full"
    assert settings.sandbox_allow == ("pypi.org:443", "files.pythonhosted.org")
    assert settings.sandbox_max_file_bytes == 2**20


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("IAC_CODE_SANDBOX", "container", "one of read-only, workspace-write, off"),
        ("IAC_CODE_SANDBOX_CEILING", "none", "one of read-only, workspace-write, off"),
        ("IAC_CODE_SANDBOX_NETWORK", "some", "one of none, allowlist, full"),
        ("IAC_CODE_SANDBOX_NETWORK", "allowlist", "needs IAC_CODE_SANDBOX_ALLOW"),
        ("IAC_CODE_SANDBOX_MAX_PROCESSES", "0", "too small"),
    ],
)
def test_a_wrong_sandbox_setting_is_refused_naming_the_choices(
    tmp_path: Path, variable: str, value: str, said: str
) -> None:
    with pytest.raises(SettingsError, match=said):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), variable: value})


def test_a_default_above_the_ceiling_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="above IAC_CODE_SANDBOX_CEILING"):
        load_settings(
            {
                "IAC_CODE_CONFIG_DIR": str(tmp_path),
                "IAC_CODE_SANDBOX": "off",
                "IAC_CODE_SANDBOX_CEILING": "workspace-write",
            }
        )


def test_an_http_server_told_to_run_unconfined_needs_no_sandbox(tmp_path: Path) -> None:
    from bootstrap.http import sandbox_problem

    settings = load_settings(
        {
            "IAC_CODE_CONFIG_DIR": str(tmp_path),
            "IAC_CODE_SANDBOX": "off",
            "IAC_CODE_SANDBOX_ENGINE": "bubblewrap",
        }
    )
    assert sandbox_problem(settings) is None


def test_isolation_defaults_to_none_and_takes_worktree(tmp_path: Path) -> None:
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}).isolation == "none"
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_ISOLATION": "worktree"}
    assert load_settings(env).isolation == "worktree"
    with pytest.raises(SettingsError, match="one of none, worktree"):
        load_settings({**env, "IAC_CODE_ISOLATION": "container"})
