"""HTTP settings from the environment, and the warning for exposed binds without a token."""

import sqlite3
from pathlib import Path

import pytest

from adapters.http.config import HttpConfig
from bootstrap.http import database_ready, is_loopback, warn_if_exposed
from bootstrap.http_settings import load_http_config
from bootstrap.settings import SettingsError


def test_defaults_follow_the_issue() -> None:
    config = load_http_config({})
    assert config.token is None
    assert config.max_body_bytes == 10 * 2**20
    assert config.keepalive_seconds == 15
    assert config.idle_timeout_seconds == 3600
    assert config.initialize_timeout_seconds == 30


@pytest.mark.parametrize("name", ["IACCODE_ACP_HTTP_TOKEN", "IAC_CODE_ACP_HTTP_TOKEN"])
def test_the_token_is_read_under_both_names_and_never_shown(name: str) -> None:
    config = load_http_config({name: " s3cret "})
    assert config.token == "s3cret"
    assert "s3cret" not in repr(config)


def test_the_product_spelling_wins_and_blank_means_unset() -> None:
    both = {"IACCODE_ACP_HTTP_TOKEN": "a", "IAC_CODE_ACP_HTTP_TOKEN": "b"}
    assert load_http_config(both).token == "a"
    assert load_http_config({"IACCODE_ACP_HTTP_TOKEN": "  "}).token is None


def test_limits_and_timings_are_configurable() -> None:
    config = load_http_config(
        {
            "IAC_CODE_HTTP_MAX_BODY_BYTES": "2048",
            "IAC_CODE_HTTP_BUFFER_EVENTS": "50",
            "IAC_CODE_HTTP_BUFFER_BYTES": "65536",
            "IAC_CODE_HTTP_KEEPALIVE_SECONDS": "0.5",
            "IAC_CODE_HTTP_IDLE_TIMEOUT_SECONDS": "8",
            "IAC_CODE_HTTP_MAX_CONNECTIONS": "3",
            "IAC_CODE_WS_PING_INTERVAL_SECONDS": "2.5",
            "IAC_CODE_WS_PING_TIMEOUT_SECONDS": "4",
        }
    )
    assert config == HttpConfig(
        max_body_bytes=2048,
        buffer_max_events=50,
        buffer_max_bytes=65536,
        max_event_bytes=65536,  # never over the buffer
        keepalive_seconds=0.5,
        idle_timeout_seconds=8,
        reap_interval_seconds=2,  # a quarter of a short idle timeout
        max_connections=3,
        ws_ping_interval_seconds=2.5,
        ws_ping_timeout_seconds=4,
    )


@pytest.mark.parametrize("value", ["many", "0", "-1"])
def test_bad_numbers_are_configuration_errors(value: str) -> None:
    with pytest.raises(SettingsError, match="IAC_CODE_HTTP_MAX_CONNECTIONS"):
        load_http_config({"IAC_CODE_HTTP_MAX_CONNECTIONS": value})


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_public_bind_without_a_token_is_loudly_warned(capsys: pytest.CaptureFixture[str]) -> None:
    warn_if_exposed("0.0.0.0", HttpConfig())
    warned = capsys.readouterr().err
    warn_if_exposed("0.0.0.0", HttpConfig(token="t"))
    warn_if_exposed("127.0.0.1", HttpConfig())
    assert "WITHOUT A TOKEN" in warned and "IACCODE_ACP_HTTP_TOKEN" in warned
    assert capsys.readouterr().err == ""


def test_a_required_token_must_be_set() -> None:
    with pytest.raises(SettingsError, match="IACCODE_ACP_HTTP_TOKEN"):
        load_http_config({"IAC_CODE_HTTP_REQUIRE_TOKEN": "1"})
    required = {"IAC_CODE_HTTP_REQUIRE_TOKEN": "1", "IACCODE_ACP_HTTP_TOKEN": "t"}
    assert load_http_config(required).token == "t"


@pytest.mark.integration
async def test_readiness_needs_a_migrated_database(tmp_path: Path) -> None:
    from adapters.persistence.migrate import upgrade_to_head

    url = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    with pytest.raises(sqlite3.Error):  # /readyz answers 503 on any failure of the check
        await database_ready(url)()
    upgrade_to_head(url)
    assert await database_ready(url)() is True
