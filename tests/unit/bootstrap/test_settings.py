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
        ({"IAC_CODE_PROVIDER": "openai"}, "IAC_CODE_PROVIDER"),
        ({"IAC_CODE_MAX_TURN_REQUESTS": "zero"}, "max_turn_requests"),
        ({"IAC_CODE_MAX_TURN_REQUESTS": "0"}, "max_turn_requests"),
        ({"IAC_CODE_DEFAULT_MODE": "yolo"}, "default_mode"),
        ({"IAC_CODE_DEFAULT_MODE": "bypass"}, "IAC_CODE_ALLOW_BYPASS=1"),
        ({"IAC_CODE_ALLOW_BYPASS": "maybe"}, "allow_bypass"),
        ({"IAC_CODE_THOUGHT_LEVEL": "max"}, "thought_level"),
        ({"IAC_CODE_MAX_IMAGE_BYTES": "0"}, "max_image_bytes"),
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
    from bootstrap.container import build_catalog

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
