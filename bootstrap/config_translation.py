"""The reference system's settings and credentials, read leniently, as this project's
config: what maps is taken, what does not is reported with the reason (docs/config-import.md
lists every form understood). Pure: config_import.py reads and writes the files."""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.llm.providers import BY_ID, PROFILES, normalise

_PROVIDER_KEYS = ("provider", "active_provider", "default_provider", "current_provider")

_MODEL_KEYS = ("model", "default_model", "active_model")

_BASE_URL_KEYS = ("base_url", "api_base", "endpoint")

_KEY_ENV_KEYS = ("api_key_env", "key_env")

_KEY_KEYS = ("api_key", "key", "token")

_ENTRY_KEYS = {*_MODEL_KEYS, *_BASE_URL_KEYS, *_KEY_ENV_KEYS, *_KEY_KEYS, "models", "id", "name"}

# Names people gave providers that our profiles know under another id.
_ALIASES = {
    "qwen": "dashscope",
    "tongyi": "dashscope",
    "bailian": "dashscope",
    "aliyun": "dashscope",
    "alibaba": "dashscope",
    "claude": "anthropic",
}

_MODEL_FIELDS = {  # ours <- the names a model entry may use for it
    "context_window": ("context_window", "context_length", "max_context"),
    "max_output": ("max_output", "max_output_tokens", "max_tokens"),
    "input_price": ("input_price",),
    "output_price": ("output_price",),
}

_ENV_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


@dataclass
class Imported:
    config: dict[str, Any] = field(default_factory=dict)
    took: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def providers(self) -> dict[str, dict[str, Any]]:
        tables: dict[str, dict[str, Any]] = self.config.setdefault("providers", {})
        return tables


def provider_id(name: str) -> str:
    """Our id for a provider name: a profile's (`DashScope`, `qwen`, `openai-compatible`),
    else the name in lowercase, as `normalise` gives it, with what a TOML bare key cannot hold
    as `_` (`My vLLM` -> `my_vllm`, `my-vllm` stays)."""
    squashed = "".join(c for c in name.lower() if c.isalnum())
    if squashed in _ALIASES:
        return _ALIASES[squashed]
    known = normalise(name)
    if known in BY_ID:
        return known
    return re.sub(r"[^a-z0-9_-]+", "_", name.strip().lower()).strip("_")


def _first(entry: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    return next((entry[n] for n in names if entry.get(n) not in (None, "")), None)


def _model(raw: Any, where: str, result: Imported) -> str | dict[str, Any] | None:
    if isinstance(raw, str | int | float) and not isinstance(raw, bool):
        return str(raw)
    if not isinstance(raw, Mapping) or not _first(raw, ("id", "model", "name")):
        result.skipped.append(f"{where}: a model entry without an id")
        return None
    model: dict[str, Any] = {"id": str(_first(raw, ("id", "model", "name")))}
    if raw.get("name") and model["id"] != raw["name"]:
        model["name"] = str(raw["name"])
    for ours, names in _MODEL_FIELDS.items():
        value = _first(raw, names)
        if value is None:
            continue
        wanted = int if ours in ("context_window", "max_output") else float
        try:
            number = wanted(value)
        except (TypeError, ValueError):
            result.skipped.append(f"{where}: {model['id']}'s {ours} {value!r} is not a number")
            continue
        if isinstance(value, bool) or number < 0:
            result.skipped.append(f"{where}: {model['id']}'s {ours} {value!r} is not a number")
            continue
        model[ours] = number
    return model if len(model) > 1 else model["id"]


def _models(raw: Any, where: str, result: Imported) -> list[str | dict[str, Any]]:
    if isinstance(raw, Mapping):  # id -> details
        raw = [{"id": k, **(v if isinstance(v, Mapping) else {})} for k, v in raw.items()]
    elif not isinstance(raw, list):
        raw = [raw]
    models = [_model(item, where, result) for item in raw]
    return [m for m in models if m is not None]


def _model_id(model: str | dict[str, Any]) -> str:
    return model if isinstance(model, str) else str(model["id"])


def _entries(providers: Any, result: Imported) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The `providers:` section as (name, entry): a mapping of name -> entry, or a list of
    entries naming themselves with `id` or `name`."""
    if isinstance(providers, Mapping):
        for name, entry in providers.items():
            if isinstance(entry, Mapping):
                yield str(name), entry
            else:
                result.skipped.append(f"settings.yml providers.{name}: not a mapping")
    elif isinstance(providers, list):
        for entry in providers:
            name = _first(entry, ("id", "name")) if isinstance(entry, Mapping) else None
            if name is None or not isinstance(entry, Mapping):
                result.skipped.append("settings.yml providers: an entry without an id or name")
            else:
                yield str(name), entry
    elif providers is not None:
        result.skipped.append("settings.yml providers: neither a mapping nor a list")


class _Translation:
    """Builds the Imported from both files' contents."""

    def __init__(self, settings: Mapping[str, Any], credentials: Mapping[str, Any]) -> None:
        self.settings = settings
        self.credentials = credentials
        self.result = Imported()
        self.entries: dict[str, Mapping[str, Any]] = {}  # our provider id -> its entry
        self.active: str | None = None

    def run(self) -> Imported:
        self._providers()
        self._active_provider()
        self._active_model()
        self._top_level_provider_values()
        self._settings_leftovers()
        self._credentials(self.credentials, ".credentials.yml")
        tables = {k: v for k, v in self.result.providers().items() if v}
        if tables:
            self.result.config["providers"] = tables
        else:
            del self.result.config["providers"]
        return self.result

    def _providers(self) -> None:
        for name, entry in _entries(self.settings.get("providers"), self.result):
            pid = provider_id(name)
            if pid not in BY_ID and not _first(entry, _BASE_URL_KEYS):
                self.result.skipped.append(
                    f"provider {name!r}: not one we know and no base_url to point at"
                )
                continue
            self.entries[pid] = entry
            self._provider(pid, name, entry)

    def _provider(self, pid: str, name: str, entry: Mapping[str, Any]) -> None:
        table = self.result.providers().setdefault(pid, {})
        where = f"settings.yml providers.{name}"
        if base_url := _first(entry, _BASE_URL_KEYS):
            table["base_url"] = str(base_url)
        if key_env := _first(entry, _KEY_ENV_KEYS):
            table["api_key_env"] = str(key_env)
        models = _models(entry["models"], where, self.result) if "models" in entry else []
        own = _first(entry, _MODEL_KEYS)
        # Its default model is offered too when our profile does not know it.
        catalogue = {m.id for m in BY_ID[pid].models} if pid in BY_ID else set()
        if own and str(own) not in catalogue | {_model_id(m) for m in models}:
            models.append(str(own))
        if models:
            table["models"] = models
        taken: list[str] = [k for k in ("base_url", "api_key_env") if k in table]
        taken += [f"{len(models)} model(s)"] if models else []
        shown = pid if pid == name else f"{pid} (was {name!r})"
        if taken:
            self.result.took.append(f"provider {shown}: {', '.join(taken)}")
        if ignored := sorted(str(k) for k in entry if k not in _ENTRY_KEYS):
            self.result.skipped.append(f"{where}: {', '.join(ignored)} (no counterpart here)")
        if key := _first(entry, _KEY_KEYS):
            self._key(pid, key, "settings.yml")

    def _active_provider(self) -> None:
        named = _first(self.settings, _PROVIDER_KEYS)
        if named is not None:
            pid = provider_id(str(named))
            if pid in BY_ID or pid in self.entries:
                self.active = pid
                self.result.config["provider"] = pid
                self.result.took.append(f"active provider: {pid}")
            else:
                self.result.skipped.append(
                    f"active provider {named!r}: not one we know and no base_url for it in "
                    "settings.yml providers"
                )
        elif len(self.entries) == 1:
            self.active = next(iter(self.entries))
            self.result.config["provider"] = self.active
            self.result.took.append(f"active provider: {self.active} (the only one listed)")

    def _active_model(self) -> None:
        model = _first(self.settings, _MODEL_KEYS)
        if model is None and self.active in self.entries:
            model = _first(self.entries[self.active], _MODEL_KEYS)
        if model is not None:
            self.result.config["model"] = str(model)
            self.result.took.append(f"model: {model}")

    def _top_level_provider_values(self) -> None:
        """base_url / api_key_env / models / api_key at the top: the active provider's."""
        present = [k for k in (*_BASE_URL_KEYS, *_KEY_ENV_KEYS, "models") if k in self.settings]
        key = _first(self.settings, _KEY_KEYS)
        if self.active is None:
            for name in present + (["api_key"] if key else []):
                self.result.skipped.append(f"settings.yml {name}: no active provider to give it")
            return
        table = self.result.providers().setdefault(self.active, {})
        if base_url := _first(self.settings, _BASE_URL_KEYS):
            table["base_url"] = str(base_url)
            self.result.took.append(f"base_url for {self.active}")
        if key_env := _first(self.settings, _KEY_ENV_KEYS):
            table["api_key_env"] = str(key_env)
            self.result.took.append(f"api_key_env for {self.active}: {key_env}")
        if "models" in self.settings:
            table["models"] = _models(self.settings["models"], "settings.yml models", self.result)
            self.result.took.append(f"{len(table['models'])} model(s) for {self.active}")
        if key:
            self._key(self.active, key, "settings.yml")

    def _settings_leftovers(self) -> None:
        known = {*_PROVIDER_KEYS, *_MODEL_KEYS, *_BASE_URL_KEYS, *_KEY_ENV_KEYS, *_KEY_KEYS}
        leftovers = sorted(k for k in self.settings if k not in known | {"providers", "models"})
        if leftovers:
            self.result.skipped.append(
                f"settings.yml {', '.join(leftovers)}: not provider settings (not imported)"
            )

    def _credentials(self, credentials: Mapping[str, Any], source: str) -> None:
        for name, value in credentials.items():
            if name.lower() in ("providers", "credentials", "api_keys", "keys") and isinstance(
                value, Mapping
            ):
                self._credentials(value, source)
                continue
            if isinstance(value, Mapping):
                pid: str | None = provider_id(name)
                key = _first(value, _KEY_KEYS)
            else:
                pid, key = self._key_owner(name), value
            if pid is None:
                self.result.skipped.append(f"{source} {name}: no provider of ours to give it")
            elif key is None:
                self.result.skipped.append(f"{source} {name}: no api_key in it")
            else:
                self._key(pid, key, source, name)

    def _key_owner(self, name: str) -> str | None:
        """The provider a flat credentials entry belongs to: `api_key` -> the active one;
        `DASHSCOPE_API_KEY` -> the provider reading that variable; `dashscope` -> dashscope."""
        if name.lower() in _KEY_KEYS or name == "IAC_CODE_API_KEY":
            return self.active
        for pid, entry in self.entries.items():
            if _first(entry, _KEY_ENV_KEYS) == name:
                return pid
        if owner := next((p.id for p in PROFILES if p.key_env == name), None):
            return owner
        base = name[: -len("_API_KEY")] if name.upper().endswith("_API_KEY") else name
        return provider_id(base)

    def _key(self, pid: str, key: Any, source: str, name: str | None = None) -> None:
        label = f"{source} {name}" if name else source
        if pid == "demo":
            self.result.skipped.append(f"{label}: the demo needs no key")
            return
        if pid not in BY_ID and pid not in self.entries:
            self.result.skipped.append(
                f"key for {pid!r} ({label}): not a provider we know and none with a base_url"
            )
            return
        if not isinstance(key, str) or not key.strip():
            self.result.skipped.append(f"key for {pid} ({label}): empty or not text")
            return
        table = self.result.providers().setdefault(pid, {})
        if reference := _ENV_REFERENCE.fullmatch(key.strip()):
            # `${DASHSCOPE_API_KEY}`: the reference read it from a variable; so shall we.
            table["api_key_env"] = reference.group(1)
            self.result.took.append(f"api_key_env for {pid}: {reference.group(1)} ({label})")
            return
        table["api_key"] = key.strip()
        self.result.took.append(f"key for {pid} (from {source})")


def translate(settings: Mapping[str, Any], credentials: Mapping[str, Any]) -> Imported:
    """What both reference files say, as config.toml values, with what was taken and what
    was skipped. Pure: reads nothing, writes nothing."""
    return _Translation(settings, credentials).run()
