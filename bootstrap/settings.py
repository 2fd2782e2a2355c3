"""Settings from the environment, over an optional $IAC_CODE_CONFIG_DIR/config.toml."""

import math
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.llm.catalogue import ModelOverride
from adapters.llm.providers import BY_ID, Adapter, ProviderProfile
from bootstrap.catalogue_config import parse_catalogue
from bootstrap.provider_settings import Endpoint, choose_provider, endpoint, parse_providers
from bootstrap.tracing import TracingConfigError, traces_exporters
from domain.models import ThoughtLevel
from domain.modes import ModeId
from domain.sandbox import NetworkLevel, SandboxLevel

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
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
    # This process among several serving one database: it holds the leases of the turns it
    # runs and prefixes its HTTP connection ids (a balancer routes on that prefix).
    replica_id: str = field(default_factory=lambda: default_replica_id())
    lease_seconds: float = 30.0  # a running turn's lease; renewed every third of it
    # How often a running turn looks for a cancel asked on another replica (at most a
    # third of lease_seconds): the delay before such a cancel takes effect.
    lease_poll_seconds: float = 0.5
    log_level: str = "INFO"
    max_turn_requests: int = 50
    max_tokens: int = 8192
    thought_level: str = ThoughtLevel.OFF  # of new sessions
    default_mode: str = ModeId.DEFAULT  # of new sessions
    allow_bypass: bool = False  # offer the "don't ask" mode
    max_image_bytes: int = 5 * 2**20
    # File checkpoints (the prior content of files the agent changes, for a rewind that
    # restores files): at most this many bytes kept per session, the oldest dropped first.
    checkpoint_max_bytes: int = 50 * 2**20
    max_retries: int = 4  # a model request is asked again at most this many times ...
    provider_retry_seconds: float = 120.0  # ... waiting at most this long in all
    request_timeout: float = 600.0
    permission_timeout: float = 300.0
    # How long a running turn goes on with no client attached before it is cancelled.
    detached_turn_timeout: float = 300.0
    max_tasks: int = 8  # background tasks running at once in one session
    max_subagents: int = 3  # sub-agents one model response may start (they run at once)
    # A background task ending while its session is idle starts a turn for the model.
    task_follow_up: bool = False
    # Prompts a session holds behind its running turn for clients that queue (0: none).
    prompt_queue_max: int = 8
    bash_timeout: float = 120.0
    bash_max_timeout: float = 600.0
    mcp_connect_timeout: float = 10.0  # per MCP server; the first prompt waits at most this
    max_message_bytes: int = 10 * 2**20  # one stdio line; the HTTP body limit's default
    demo_pace: float = 40.0  # the demo model's tokens per second; 0 streams at once
    # Compact the history once a request would fill this fraction of the model's context
    # window, keeping this many of the latest user turns word for word.
    compact_at: float = 0.85
    compact_keep_turns: int = 2
    # The session journal (numbered updates a reconnecting client is sent again): how many
    # are kept per session and for how long; how often a batch of them is written.
    journal_keep_events: int = 10_000
    journal_keep_seconds: float = 7 * 86_400.0
    journal_flush_seconds: float = 0.15
    # config.toml's [catalogue."<model id>"] tables, applied over the built-in catalogue.
    catalogue_overrides: Mapping[str, ModelOverride] = field(default_factory=dict)
    key_variable: str | None = None  # where the key was looked for; None: the profile's
    # The selected provider's [providers.<id>] table, and the other providers configured in
    # config.toml that have a key: their models are offered too, each served by its own.
    endpoint: Endpoint | None = None
    others: tuple[Endpoint, ...] = ()
    # OpenTelemetry exporters from OTEL_TRACES_EXPORTER (bootstrap/tracing.py); empty: off.
    traces_exporters: tuple[str, ...] = ()
    # The sandbox of the agent's commands (docs/sandbox.md): new sessions' level, the most
    # a session may choose, their network, the hosts an allowlist would let through, and
    # the limits of a confined command.
    sandbox: str = SandboxLevel.WORKSPACE_WRITE
    sandbox_ceiling: str = SandboxLevel.OFF
    sandbox_network: str = NetworkLevel.NONE
    sandbox_allow: tuple[str, ...] = ()
    sandbox_max_file_bytes: int = 4 * 2**30
    sandbox_max_processes: int = 2048
    sandbox_engine: str = "auto"  # bubblewrap, else Landlock; or only the one named
    # New sessions in a git repository each work in a worktree of their own (`worktree`).
    isolation: str = "none"
    # The TCP ports this server listens on (set by the HTTP server once bound, not read
    # from the environment): a sandbox's allowlist never reaches them.
    own_ports: tuple[int, ...] = ()

    @property
    def profile(self) -> ProviderProfile:
        return BY_ID[self.provider]

    @property
    def has_credentials(self) -> bool:
        return bool(self.api_key) or self.profile.key_optional

    @property
    def key_hint(self) -> str:
        """The variable a user sets for the key, as errors and `authMethods` name it."""
        return self.key_variable or self.profile.key_env or "IAC_CODE_API_KEY"

    @property
    def default_model(self) -> str:
        return "demo" if self.provider == "demo" else self.model


_ENV = {  # setting -> environment variables, first set wins (the provider's: see below)
    "model": ("IAC_CODE_MODEL",),
    "models": ("IAC_CODE_MODELS",),
    "database_url": ("IAC_CODE_DATABASE_URL",),
    "replica_id": ("IAC_CODE_REPLICA_ID",),
    "lease_seconds": ("IAC_CODE_LEASE_SECONDS",),
    "lease_poll_seconds": ("IAC_CODE_LEASE_POLL_SECONDS",),
    "log_level": ("IAC_CODE_LOG_LEVEL",),
    "max_turn_requests": ("IAC_CODE_MAX_TURN_REQUESTS",),
    "max_tokens": ("IAC_CODE_MAX_TOKENS",),
    "thought_level": ("IAC_CODE_THOUGHT_LEVEL",),
    "default_mode": ("IAC_CODE_DEFAULT_MODE",),
    "allow_bypass": ("IAC_CODE_ALLOW_BYPASS",),
    "max_image_bytes": ("IAC_CODE_MAX_IMAGE_BYTES",),
    "checkpoint_max_bytes": ("IAC_CODE_CHECKPOINT_MAX_BYTES",),
    "max_retries": ("IAC_CODE_MAX_RETRIES",),
    "provider_retry_seconds": ("IAC_CODE_PROVIDER_RETRY_SECONDS",),
    "request_timeout": ("IAC_CODE_REQUEST_TIMEOUT",),
    "permission_timeout": ("IAC_CODE_PERMISSION_TIMEOUT",),
    "detached_turn_timeout": ("IAC_CODE_DETACHED_TURN_TIMEOUT",),
    "max_tasks": ("IAC_CODE_MAX_TASKS",),
    "max_subagents": ("IAC_CODE_MAX_SUBAGENTS",),
    "task_follow_up": ("IAC_CODE_TASK_FOLLOW_UP",),
    "prompt_queue_max": ("IAC_CODE_PROMPT_QUEUE_MAX",),
    "bash_timeout": ("IAC_CODE_BASH_TIMEOUT",),
    "bash_max_timeout": ("IAC_CODE_BASH_MAX_TIMEOUT",),
    "mcp_connect_timeout": ("IAC_CODE_MCP_CONNECT_TIMEOUT",),
    "max_message_bytes": ("IAC_CODE_MAX_MESSAGE_BYTES",),
    "demo_pace": ("IAC_CODE_DEMO_PACE",),
    "compact_at": ("IAC_CODE_COMPACT_AT",),
    "compact_keep_turns": ("IAC_CODE_COMPACT_KEEP_TURNS",),
    "journal_keep_events": ("IAC_CODE_JOURNAL_KEEP_EVENTS",),
    "journal_keep_seconds": ("IAC_CODE_JOURNAL_KEEP_SECONDS",),
    "journal_flush_seconds": ("IAC_CODE_JOURNAL_FLUSH_SECONDS",),
    "sandbox": ("IAC_CODE_SANDBOX",),
    "sandbox_ceiling": ("IAC_CODE_SANDBOX_CEILING",),
    "sandbox_network": ("IAC_CODE_SANDBOX_NETWORK",),
    "sandbox_allow": ("IAC_CODE_SANDBOX_ALLOW",),
    "sandbox_max_file_bytes": ("IAC_CODE_SANDBOX_MAX_FILE_BYTES",),
    "sandbox_max_processes": ("IAC_CODE_SANDBOX_MAX_PROCESSES",),
    "sandbox_engine": ("IAC_CODE_SANDBOX_ENGINE",),
    "isolation": ("IAC_CODE_ISOLATION",),
}
_FLOATS = {
    "lease_seconds",
    "provider_retry_seconds",
    "lease_poll_seconds",
    "request_timeout",
    "permission_timeout",
    "detached_turn_timeout",
    "bash_timeout",
    "bash_max_timeout",
    "mcp_connect_timeout",
    "journal_keep_seconds",
    "journal_flush_seconds",
}
_INTS = {
    "prompt_queue_max",
    "max_turn_requests",
    "max_tasks",
    "max_subagents",
    "max_tokens",
    "max_retries",
    "max_message_bytes",
    "max_image_bytes",
    "checkpoint_max_bytes",
    "compact_keep_turns",
    "journal_keep_events",
    "sandbox_max_file_bytes",
    "sandbox_max_processes",
}
# compact_keep_turns >= 1: the latest user turn (the one being answered) is never summarised.
_POSITIVE = {
    "max_turn_requests",
    "max_tasks",
    "max_subagents",
    "max_tokens",
    "max_message_bytes",
    "max_image_bytes",
    "compact_keep_turns",
    "journal_keep_events",
    "sandbox_max_file_bytes",
    "sandbox_max_processes",
}
_CHOICES = {
    "thought_level": tuple(ThoughtLevel),
    "default_mode": tuple(ModeId),
    "sandbox": tuple(SandboxLevel),
    "sandbox_ceiling": tuple(SandboxLevel),
    "sandbox_network": tuple(NetworkLevel),
    "sandbox_engine": ("auto", "bubblewrap", "landlock"),
    "isolation": ("none", "worktree"),
}


_REPLICA_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def default_replica_id() -> str:
    """Unique per process start: the host's name (cut to what ids allow) and random bits."""
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:24] or "host"
    # What secrets.token_hex(4) returns, without importing `secrets` (hmac, hashlib,
    # random: ~2 ms of every start before `initialize`).
    return f"{host}-{os.urandom(4).hex()}"


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
            if not 0 < seconds < math.inf:
                raise ValueError("a positive number of seconds")
            return seconds
        if name in _CHOICES and str(value) not in _CHOICES[name]:
            raise ValueError(f"one of {', '.join(_CHOICES[name])}")
        if name in ("allow_bypass", "task_follow_up"):
            flag = str(value).strip().lower()
            if flag not in _TRUE | _FALSE:
                raise ValueError("1 or 0")
            return flag in _TRUE
        if name == "replica_id":
            if not _REPLICA_ID.fullmatch(str(value)):
                raise ValueError("1 to 40 letters, digits, '_' or '-'")
            return str(value)
        if name in ("models", "sandbox_allow"):
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
        import tomllib  # only when there is a file to read: ~2 ms of a start otherwise

        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{config_file}: {exc}") from None
        values.update({k: _convert(k, v) for k, v in data.items() if k in _ENV})
        try:
            if "catalogue" in data:
                values["catalogue_overrides"] = parse_catalogue(data["catalogue"])
            configs = parse_providers(data.get("providers", {}))
        except ValueError as exc:
            raise SettingsError(f"{config_file}: {exc}") from None
    else:
        data, configs = {}, {}
    for name, variables in _ENV.items():
        # Set but empty (or blank) is unset: compose passes `${IAC_CODE_MODEL:-}` for a
        # model the user did not name, which must mean the provider's default.
        found = next((env[v] for v in variables if env.get(v, "").strip()), None)
        if found is not None:
            values[name] = _convert(name, found)
    values.update(_provider_values(env, data, configs, values.get("model")))
    if values.get("default_mode") == ModeId.BYPASS and not values.get("allow_bypass"):
        raise SettingsError(
            'IAC_CODE_DEFAULT_MODE=bypass needs IAC_CODE_ALLOW_BYPASS=1: the "don\'t ask" '
            "mode is offered only when the operator allows it"
        )
    _check_sandbox(values)
    values.setdefault("database_url", f"sqlite+aiosqlite:///{config_dir / 'iac-code.db'}")
    values["log_level"] = str(values.get("log_level", "INFO")).upper()
    try:
        values["traces_exporters"] = traces_exporters(env)
    except TracingConfigError as exc:
        raise SettingsError(str(exc)) from None
    return Settings(config_dir=config_dir, **values)


def _check_sandbox(values: Mapping[str, Any]) -> None:
    levels = tuple(SandboxLevel)
    default = values.get("sandbox", SandboxLevel.WORKSPACE_WRITE)
    ceiling = values.get("sandbox_ceiling", SandboxLevel.OFF)
    if levels.index(SandboxLevel(default)) > levels.index(SandboxLevel(ceiling)):
        raise SettingsError(
            f"IAC_CODE_SANDBOX={default} is above IAC_CODE_SANDBOX_CEILING={ceiling}: new "
            "sessions could not start with it"
        )
    if values.get("sandbox_network") == NetworkLevel.ALLOWLIST and not values.get("sandbox_allow"):
        raise SettingsError(
            "IAC_CODE_SANDBOX_NETWORK=allowlist needs IAC_CODE_SANDBOX_ALLOW: the hosts "
            "(host[:port], comma-separated) the sandbox's proxy lets through"
        )


def _provider_values(
    env: Mapping[str, str],
    config: Mapping[str, Any],
    configs: Mapping[str, Any],
    model: str | None,
) -> dict[str, Any]:
    """The selected provider, its model, key and endpoint, and the other configured ones."""
    try:
        provider = choose_provider(env, config, model)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    chosen = endpoint(provider, env, configs, selected=True)
    profile = chosen.profile
    model = model or profile.default_model
    if not model:
        raise SettingsError(f"the {provider} provider needs a model: set IAC_CODE_MODEL")
    if provider == "openai_compatible" and not chosen.base_url:
        raise SettingsError(
            "the openai_compatible provider needs the server's URL: set IAC_CODE_BASE_URL "
            "(e.g. http://localhost:11434/v1 for Ollama)"
        )
    others = tuple(
        e
        for e in (endpoint(p, env, configs, selected=False) for p in configs if p != provider)
        if (e.usable and e.base_url is not None) or e.api_key
    )
    return {
        "provider": provider,
        "model": model,
        "api_key": chosen.api_key,
        "base_url": chosen.base_url,
        "key_variable": chosen.key_variable,
        "endpoint": chosen,
        "others": others,
    }


def _offered(other: Endpoint) -> bool:
    """Another configured provider serves its models when it can be called: it has a key
    (or needs none) and an address."""
    profile = other.profile
    if profile.adapter is Adapter.DEMO or not other.usable:
        return False
    return other.base_url is not None or profile.id != "openai_compatible"
