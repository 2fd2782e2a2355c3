"""Which provider serves, with which key and endpoint: from the environment, config.toml's
`provider` and `[providers.<id>]` tables, and the profiles (adapters/llm/providers.py).

Selection: IAC_CODE_PROVIDER → config.toml `provider` → the model name's prefix → anthropic.
Key: IAC_CODE_API_KEY (the selected provider only) → the profile's key variable (or the
table's `api_key_env`) → the table's `api_key`. Base URL: IAC_CODE_BASE_URL (the selected
provider only) → the profile's own variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) → the
table's `base_url` → the profile's."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.llm.catalogue import ModelOverride
from adapters.llm.providers import BY_ID, ProviderProfile, by_prefix, normalise
from bootstrap.catalogue_config import KEYS as MODEL_KEYS
from bootstrap.catalogue_config import parse_catalogue

TABLE_KEYS = ("base_url", "api_key_env", "api_key", "models")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderConfig:
    """One `[providers.<id>]` table."""

    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    # The models offered for this provider, in order (empty: its catalogue), and what each
    # table in the list sets.
    models: tuple[str, ...] = ()
    overrides: Mapping[str, ModelOverride] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """A provider ready to be called: its profile, key and base URL."""

    profile: ProviderProfile
    api_key: str | None = field(repr=False)
    base_url: str | None
    config: ProviderConfig

    @property
    def key_variable(self) -> str:
        return self.config.api_key_env or self.profile.key_env or "IAC_CODE_API_KEY"

    @property
    def usable(self) -> bool:
        return bool(self.api_key) or self.profile.key_optional


def parse_providers(tables: object) -> dict[str, ProviderConfig]:
    if not isinstance(tables, Mapping):
        raise ValueError("providers must be a table of providers: [providers.<id>]")
    parsed = {}
    for name, table in tables.items():
        provider = aliases(tables).get(normalise(str(name)), normalise(str(name)))
        if provider not in BY_ID:
            raise ValueError(
                f"[providers.{name}]: unknown provider (known: {', '.join(BY_ID)}; any other "
                "server is served as openai_compatible when its table has a base_url)"
            )
        if provider in parsed:
            raise ValueError(f"[providers.{name}]: a second table for {provider}")
        parsed[provider] = _table(f"[providers.{name}]", table)
    return parsed


def aliases(tables: object) -> dict[str, str]:
    """A table for a provider we have no profile for (a self-hosted vLLM, a gateway) with a
    base_url is the OpenAI-compatible server: its name selects `openai_compatible`."""
    if not isinstance(tables, Mapping):
        return {}
    return {
        normalise(str(name)): "openai_compatible"
        for name, table in tables.items()
        if normalise(str(name)) not in BY_ID
        and isinstance(table, Mapping)
        and isinstance(table.get("base_url"), str)
    }


def _table(where: str, table: object) -> ProviderConfig:
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table of keys ({', '.join(TABLE_KEYS)})")
    for key in table:
        if key not in TABLE_KEYS:
            raise ValueError(f"{where}: unknown key {key!r} (known: {', '.join(TABLE_KEYS)})")
    texts = {}
    for key in ("base_url", "api_key_env", "api_key"):
        value = table.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{where}: {key} must be a non-empty string")
        texts[key] = value
    names, overrides = _models(where, table.get("models", []))
    return ProviderConfig(**texts, models=names, overrides=overrides)


def _models(where: str, items: object) -> tuple[tuple[str, ...], dict[str, ModelOverride]]:
    """`models = ["id", {id = "…", name = "…", context_window = …, …}]`."""
    if not isinstance(items, list):
        raise ValueError(f"{where}: models must be a list of model ids or tables")
    names: list[str] = []
    tables: dict[str, Any] = {}
    for item in items:
        if isinstance(item, str) and item.strip():
            names.append(item.strip())
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise ValueError(f"{where}: each model is an id, or a table with an `id`")
        model_id, rest = item["id"], {k: v for k, v in item.items() if k != "id"}
        if "max_output" in rest:  # the reference system's name for it
            rest["max_output_tokens"] = rest.pop("max_output")
        unknown = set(rest) - set(MODEL_KEYS)
        if unknown:
            raise ValueError(f"{where}: model {model_id!r}: unknown key {sorted(unknown)[0]!r}")
        names.append(model_id)
        tables[model_id] = rest
    return tuple(names), parse_catalogue(tables)


def choose_provider(env: Mapping[str, str], config: Mapping[str, Any], model: str | None) -> str:
    """The provider's id, or raise ValueError naming where the unknown name came from."""
    known = aliases(config.get("providers", {}))
    for source, name in (
        ("IAC_CODE_PROVIDER", env.get("IAC_CODE_PROVIDER")),
        ("config.toml provider", config.get("provider")),
    ):
        if name:
            provider = known.get(normalise(str(name)), normalise(str(name)))
            if provider not in BY_ID:
                raise ValueError(f"{source} must be one of {', '.join(BY_ID)}, not {name!r}")
            return provider
    profile = by_prefix(model) if model else None
    return profile.id if profile else "anthropic"


def endpoint(
    provider: str,
    env: Mapping[str, str],
    configs: Mapping[str, ProviderConfig],
    *,
    selected: bool,
) -> Endpoint:
    """The provider's key and base URL. The IAC_CODE_ variables belong to the selected one."""
    profile = BY_ID[provider]
    config = configs.get(provider, ProviderConfig())
    variable = config.api_key_env or profile.key_env
    keys = [env.get("IAC_CODE_API_KEY") if selected else None]
    keys += [env.get(variable) if variable else None, config.api_key]
    urls = [
        env.get("IAC_CODE_BASE_URL") if selected else None,
        env.get(profile.base_url_env) if profile.base_url_env else None,
        config.base_url,
    ]
    return Endpoint(
        profile=profile,
        api_key=next((k for k in keys if k), None),
        base_url=next((u for u in urls if u), None) or profile.base_url,
        config=config,
    )
