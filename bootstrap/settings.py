"""Settings from the environment, over an optional $IAC_CODE_CONFIG_DIR/config.toml."""

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.llm.catalogue import ModelOverride
from bootstrap.catalogue_config import parse_catalogue
from domain.models import ThoughtLevel
from domain.modes import ModeId

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
PROVIDERS = ("anthropic", "demo")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


class SettingsError(ValueError):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    provider: str = "anthropic"
    model: str = DEFAULT_ANTHROPIC_MODEL
    models: tuple[str, ...] = ()  # offered in the model option; empty: the provider's catalogue
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    config_dir: Path = field(default_factory=lambda: Path("~/.iac-code").expanduser())
    database_url: str = ""
    log_level: str = "INFO"
    max_turn_requests: int = 50
    max_tokens: int = 8192
    thought_level: str = ThoughtLevel.OFF  # of new sessions
    default_mode: str = ModeId.DEFAULT  # of new sessions
    allow_bypass: bool = False  # offer the "don't ask" mode
    max_image_bytes: int = 5 * 2**20
    max_retries: int = 4
    request_timeout: float = 600.0
    permission_timeout: float = 300.0
    bash_timeout: float = 120.0
    bash_max_timeout: float = 600.0
    max_message_bytes: int = 10 * 2**20  # one stdio line; the HTTP body limit's default
    demo_pace: float = 40.0  # the demo model's tokens per second; 0 streams at once
    # Compact the history once a request would fill this fraction of the model's context
    # window, keeping this many of the latest user turns word for word.
    compact_at: float = 0.85
    compact_keep_turns: int = 2
    # config.toml's [catalogue."<model id>"] tables, applied over the built-in catalogue.
    catalogue_overrides: Mapping[str, ModelOverride] = field(default_factory=dict)

    @property
    def has_credentials(self) -> bool:
        return self.provider == "demo" or bool(self.api_key)

    @property
    def default_model(self) -> str:
        return "demo" if self.provider == "demo" else self.model


_ENV = {  # setting -> environment variables, first set wins
    "provider": ("IAC_CODE_PROVIDER",),
    "model": ("IAC_CODE_MODEL",),
    "models": ("IAC_CODE_MODELS",),
    "api_key": ("IAC_CODE_API_KEY", "ANTHROPIC_API_KEY"),
    "base_url": ("IAC_CODE_BASE_URL", "ANTHROPIC_BASE_URL"),
    "database_url": ("IAC_CODE_DATABASE_URL",),
    "log_level": ("IAC_CODE_LOG_LEVEL",),
    "max_turn_requests": ("IAC_CODE_MAX_TURN_REQUESTS",),
    "max_tokens": ("IAC_CODE_MAX_TOKENS",),
    "thought_level": ("IAC_CODE_THOUGHT_LEVEL",),
    "default_mode": ("IAC_CODE_DEFAULT_MODE",),
    "allow_bypass": ("IAC_CODE_ALLOW_BYPASS",),
    "max_image_bytes": ("IAC_CODE_MAX_IMAGE_BYTES",),
    "max_retries": ("IAC_CODE_MAX_RETRIES",),
    "request_timeout": ("IAC_CODE_REQUEST_TIMEOUT",),
    "permission_timeout": ("IAC_CODE_PERMISSION_TIMEOUT",),
    "bash_timeout": ("IAC_CODE_BASH_TIMEOUT",),
    "bash_max_timeout": ("IAC_CODE_BASH_MAX_TIMEOUT",),
    "max_message_bytes": ("IAC_CODE_MAX_MESSAGE_BYTES",),
    "demo_pace": ("IAC_CODE_DEMO_PACE",),
    "compact_at": ("IAC_CODE_COMPACT_AT",),
    "compact_keep_turns": ("IAC_CODE_COMPACT_KEEP_TURNS",),
}
_FLOATS = {"request_timeout", "permission_timeout", "bash_timeout", "bash_max_timeout"}
_INTS = {
    "max_turn_requests",
    "max_tokens",
    "max_retries",
    "max_message_bytes",
    "max_image_bytes",
    "compact_keep_turns",
}
# compact_keep_turns >= 1: the latest user turn (the one being answered) is never summarised.
_POSITIVE = {
    "max_turn_requests",
    "max_tokens",
    "max_message_bytes",
    "max_image_bytes",
    "compact_keep_turns",
}
_CHOICES = {"thought_level": tuple(ThoughtLevel), "default_mode": tuple(ModeId)}


def _convert(name: str, value: Any) -> Any:
    try:
        if name in _INTS:
            number = int(value)
            if number < (1 if name in _POSITIVE else 0):
                raise ValueError("too small")
            return number
        if name == "demo_pace":
            pace = float(value)
            if not pace >= 0:
                raise ValueError("must be 0 or more")
            return pace
        if name == "compact_at":
            fraction = float(value)
            if not 0 < fraction <= 1:
                raise ValueError("a fraction of the context window, more than 0 and at most 1")
            return fraction
        if name in _FLOATS:
            seconds = float(value)
            if not seconds > 0:
                raise ValueError("must be positive")
            return seconds
        if name in _CHOICES and str(value) not in _CHOICES[name]:
            raise ValueError(f"one of {', '.join(_CHOICES[name])}")
        if name == "allow_bypass":
            flag = str(value).strip().lower()
            if flag not in _TRUE | _FALSE:
                raise ValueError("1 or 0")
            return flag in _TRUE
        if name == "models":
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(m.strip() for m in items if str(m).strip())
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"invalid value for {name}: {value!r} ({exc})") from None
    return str(value)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if environ is None else environ
    config_dir = Path(env.get("IAC_CODE_CONFIG_DIR") or "~/.iac-code").expanduser()
    values: dict[str, Any] = {}
    config_file = config_dir / "config.toml"
    if config_file.is_file():
        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{config_file}: {exc}") from None
        values.update({k: _convert(k, v) for k, v in data.items() if k in _ENV})
        if "catalogue" in data:
            try:
                values["catalogue_overrides"] = parse_catalogue(data["catalogue"])
            except ValueError as exc:
                raise SettingsError(f"{config_file}: {exc}") from None
    for name, variables in _ENV.items():
        found = next((env[v] for v in variables if env.get(v)), None)
        if found is not None:
            values[name] = _convert(name, found)
    if values.setdefault("provider", "anthropic") not in PROVIDERS:
        raise SettingsError(
            f"IAC_CODE_PROVIDER must be one of {', '.join(PROVIDERS)}, not {values['provider']!r}"
        )
    if values.get("default_mode") == ModeId.BYPASS and not values.get("allow_bypass"):
        raise SettingsError(
            'IAC_CODE_DEFAULT_MODE=bypass needs IAC_CODE_ALLOW_BYPASS=1: the "don\'t ask" '
            "mode is offered only when the operator allows it"
        )
    values.setdefault("database_url", f"sqlite+aiosqlite:///{config_dir / 'iac-code.db'}")
    values["log_level"] = str(values.get("log_level", "INFO")).upper()
    return Settings(config_dir=config_dir, **values)
