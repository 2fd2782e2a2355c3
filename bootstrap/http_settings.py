"""Settings of the HTTP transport, from the environment (the common ones are in settings.py)."""

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from adapters.http.config import HttpConfig
from adapters.http.host_guard import ORIGINS_SETTING, hostname, normal_origin
from bootstrap.settings import SettingsError

# setting -> environment variables, first set wins. The token's name is the product's.
_ENV = {
    "token": ("IACCODE_ACP_HTTP_TOKEN", "IAC_CODE_ACP_HTTP_TOKEN"),
    "max_body_bytes": ("IAC_CODE_HTTP_MAX_BODY_BYTES",),
    "buffer_max_events": ("IAC_CODE_HTTP_BUFFER_EVENTS",),
    "buffer_max_bytes": ("IAC_CODE_HTTP_BUFFER_BYTES",),
    "sender_patience_seconds": ("IAC_CODE_HTTP_SENDER_PATIENCE_SECONDS",),
    "keepalive_seconds": ("IAC_CODE_HTTP_KEEPALIVE_SECONDS",),
    "retry_ms": ("IAC_CODE_HTTP_RETRY_MS",),
    "idle_timeout_seconds": ("IAC_CODE_HTTP_IDLE_TIMEOUT_SECONDS",),
    "unused_timeout_seconds": ("IAC_CODE_HTTP_UNUSED_TIMEOUT_SECONDS",),
    "reap_interval_seconds": ("IAC_CODE_HTTP_REAP_INTERVAL_SECONDS",),
    "max_connections": ("IAC_CODE_HTTP_MAX_CONNECTIONS",),
    "initialize_timeout_seconds": ("IAC_CODE_HTTP_INITIALIZE_TIMEOUT_SECONDS",),
    "header_timeout_seconds": ("IAC_CODE_HTTP_HEADER_TIMEOUT_SECONDS",),
    "body_timeout_seconds": ("IAC_CODE_HTTP_BODY_TIMEOUT_SECONDS",),
    "max_event_bytes": ("IAC_CODE_HTTP_MAX_EVENT_BYTES",),
    "ws_ping_interval_seconds": ("IAC_CODE_WS_PING_INTERVAL_SECONDS",),
    "ws_ping_timeout_seconds": ("IAC_CODE_WS_PING_TIMEOUT_SECONDS",),
}
_TYPES = {f.name: f.type for f in fields(HttpConfig)}
_DEFAULTS = HttpConfig()
_YES = ("1", "true", "yes")


def _number(name: str, variable: str, raw: str) -> int | float:
    kind = int if _TYPES[name] is int else float
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(f"{variable} must be a number, not {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{variable} must be greater than 0, not {raw!r}")
    return value


def _origins(raw: str) -> frozenset[str]:
    """`scheme://host[:port]` entries, comma-separated (a trailing `/` is forgiven)."""
    origins = set()
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        origin = normal_origin(entry.removesuffix("/"))
        if origin is None:
            raise SettingsError(
                f"{ORIGINS_SETTING}: {entry[:100]!r} is not an origin: write "
                "scheme://host[:port] with scheme http or https, no path ('null' and '*' "
                "are not accepted)"
            )
        origins.add(origin)
    return frozenset(origins)


def load_http_config(environ: Mapping[str, str] | None = None) -> HttpConfig:
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for name, variables in _ENV.items():
        variable = next((v for v in variables if env.get(v, "").strip()), None)
        if variable is None:
            continue
        raw = env[variable].strip()
        values[name] = raw if name == "token" else _number(name, variable, raw)
    if env.get("IAC_CODE_HTTP_REQUIRE_TOKEN", "").strip() in _YES and not values.get("token"):
        raise SettingsError(
            "IAC_CODE_HTTP_REQUIRE_TOKEN is set (as in the container image): "
            "set IACCODE_ACP_HTTP_TOKEN to a long random secret"
        )
    hosts = env.get("IAC_CODE_HTTP_ALLOWED_HOSTS", "").strip()
    if hosts:
        names = (hostname(h.strip()) for h in hosts.split(",") if h.strip())
        values["allowed_hosts"] = frozenset(name for name in names if name)
    origins = env.get(ORIGINS_SETTING, "").strip()
    if origins:
        values["allowed_origins"] = _origins(origins)
    if "reap_interval_seconds" not in values:  # look often enough for short timeouts
        timeouts = (
            values.get(name, getattr(_DEFAULTS, name))
            for name in ("idle_timeout_seconds", "unused_timeout_seconds")
        )
        values["reap_interval_seconds"] = min(
            _DEFAULTS.reap_interval_seconds, *(t / 4 for t in timeouts)
        )
    # One event never outgrows the buffer that must hold it.
    buffer = values.get("buffer_max_bytes", _DEFAULTS.buffer_max_bytes)
    values["max_event_bytes"] = min(
        values.get("max_event_bytes", _DEFAULTS.max_event_bytes), buffer
    )
    return HttpConfig(**values)
