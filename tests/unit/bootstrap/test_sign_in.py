"""`iac-code login` / `logout` without a terminal (a scripted one), the keys they keep in
config.toml, the check against a scripted provider, and a running server taking a key
stored after it started."""

import io
import json
import stat
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from adapters.llm.providers import BY_ID, ProviderProfile
from bootstrap.key_check import KeyVerdict, check_key
from bootstrap.login_cli import Terminal, login, logout
from bootstrap.model_clients import build_llm
from bootstrap.settings import load_settings
from bootstrap.stored_keys import StoredKeysError, remove_key, store_key, stored_key
from tests.support.scripted_anthropic import ScriptedAnthropic


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def scripted() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as server:
        server.accept_keys("sk-good")
        yield server


def _config(config_dir: Path) -> dict[str, object]:
    return tomllib.loads((config_dir / "config.toml").read_text())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _terminal(*answers: str, secrets: tuple[str, ...] = ()) -> tuple[Terminal, io.StringIO]:
    out = io.StringIO()
    asked, pasted = iter(answers), iter(secrets)
    return Terminal(ask=lambda _: next(asked), ask_secret=lambda _: next(pasted), out=out), out


def test_a_stored_key_keeps_the_other_settings_and_is_readable_by_its_owner_only(
    config_dir: Path,
) -> None:
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(
        'model = "claude-x"\n[providers.DeepSeek]\nbase_url = "http://d"\n'
    )
    path = store_key(config_dir, "deepseek", "sk-1")
    assert _mode(path) == 0o600
    assert _config(config_dir) == {
        "model": "claude-x",
        "provider": "deepseek",
        "providers": {"DeepSeek": {"base_url": "http://d", "api_key": "sk-1"}},
    }
    assert stored_key(config_dir, "deepseek") == "sk-1"
    assert remove_key(config_dir, "deepseek") is True
    assert stored_key(config_dir, "deepseek") is None
    assert remove_key(config_dir, "deepseek") is False
    assert _mode(path) == 0o600


def test_an_unreadable_config_is_never_overwritten(config_dir: Path) -> None:
    config_dir.mkdir()
    (config_dir / "config.toml").write_text("this is = = not toml")
    with pytest.raises(StoredKeysError):
        store_key(config_dir, "anthropic", "sk-1")
    assert (config_dir / "config.toml").read_text() == "this is = = not toml"


def test_the_key_check_asks_the_providers_model_listing(scripted: ScriptedAnthropic) -> None:
    profile = BY_ID["anthropic"]
    assert check_key(profile, scripted.base_url, "sk-good") == KeyVerdict(True)
    refused = check_key(profile, scripted.base_url, "sk-bad")
    assert (refused.accepted, refused.refused) == (False, True)
    assert "401" in refused.problem
    assert [scripted.sent_key(h) for h in scripted.model_listings] == ["sk-good", "sk-bad"]
    assert scripted.requests == []  # no tokens spent: nothing was sent to /v1/messages


class _ModelListing(BaseHTTPRequestHandler):
    """An OpenAI-style `GET /v1/models` that takes one bearer token."""

    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(f"{self.path} {self.headers.get('authorization')}")
        good = self.headers.get("authorization") == "Bearer sk-good"
        body = {"data": [], "object": "list"} if good else {"error": {"message": "bad key"}}
        data = json.dumps(body).encode()
        self.send_response(200 if good else 401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_openai_style_providers_are_checked_at_their_model_listing() -> None:
    _ModelListing.seen.clear()
    with ThreadingHTTPServer(("127.0.0.1", 0), _ModelListing) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        try:
            assert check_key(BY_ID["deepseek"], url, "sk-good").accepted
            refused = check_key(BY_ID["deepseek"], url, "sk-bad")
        finally:
            httpd.shutdown()
    assert (refused.accepted, refused.refused) == (False, True)
    assert _ModelListing.seen == ["/v1/models Bearer sk-good", "/v1/models Bearer sk-bad"]


def test_an_unreachable_provider_is_not_a_refusal(scripted: ScriptedAnthropic) -> None:
    url = scripted.base_url
    scripted.stop()
    verdict = check_key(BY_ID["anthropic"], url, "sk-good", timeout=5)
    assert (verdict.accepted, verdict.refused) == (False, False)
    assert "could not reach" in verdict.problem


def test_login_checks_the_key_where_the_server_will_send_it_then_stores_it(
    config_dir: Path, scripted: ScriptedAnthropic
) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(config_dir), "ANTHROPIC_BASE_URL": scripted.base_url}
    terminal, out = _terminal("1", secrets=("sk-good",))
    assert login(env, terminal) == 0
    assert _config(config_dir) == {
        "provider": "anthropic",
        "providers": {"anthropic": {"api_key": "sk-good"}},
    }
    assert _mode(config_dir / "config.toml") == 0o600
    assert "sk-good" not in out.getvalue()
    assert len(scripted.model_listings) == 1


def test_a_refused_key_is_not_stored(config_dir: Path, scripted: ScriptedAnthropic) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(config_dir), "IAC_CODE_BASE_URL": scripted.base_url}
    terminal, out = _terminal("anthropic", secrets=("sk-bad",))
    assert login(env, terminal) == 1
    assert not (config_dir / "config.toml").exists()
    assert "refused the key" in out.getvalue()


def test_login_asks_again_for_a_choice_it_does_not_know(config_dir: Path) -> None:
    checked: list[tuple[str, str]] = []

    def check(profile: ProviderProfile, url: str | None, key: str) -> KeyVerdict:
        checked.append((profile.id, key))
        return KeyVerdict(True)

    terminal, out = _terminal("9", "deep seek", secrets=("", "sk-d"))
    assert login({"IAC_CODE_CONFIG_DIR": str(config_dir)}, terminal, check=check) == 0
    assert checked == [("deepseek", "sk-d")]
    assert "Not a choice: '9'" in out.getvalue()
    assert "No key given." in out.getvalue()


def test_the_demo_takes_no_key_and_is_not_checked(config_dir: Path) -> None:
    def check(profile: ProviderProfile, url: str | None, key: str) -> KeyVerdict:
        raise AssertionError("the demo is not checked")

    terminal, _ = _terminal("5")
    assert login({"IAC_CODE_CONFIG_DIR": str(config_dir)}, terminal, check=check) == 0
    assert _config(config_dir) == {"provider": "demo"}


def test_logout_removes_the_selected_providers_key(config_dir: Path) -> None:
    store_key(config_dir, "openai", "sk-o")
    out = io.StringIO()
    assert logout({"IAC_CODE_CONFIG_DIR": str(config_dir)}, None, out) == 0
    assert stored_key(config_dir, "openai") is None
    assert "Removed the OpenAI key" in out.getvalue()
    assert logout({"IAC_CODE_CONFIG_DIR": str(config_dir)}, "nope", out) == 2


def test_a_server_started_without_a_key_takes_the_one_login_stores(config_dir: Path) -> None:
    env = {"IAC_CODE_CONFIG_DIR": str(config_dir), "IAC_CODE_PROVIDER": "anthropic"}
    llm = build_llm(load_settings(env))
    assert llm.has_credentials() is False
    store_key(config_dir, "anthropic", "sk-late")
    assert llm.has_credentials() is True
    remove_key(config_dir, "anthropic")
    assert llm.has_credentials() is True  # kept until the server restarts
