"""The API keys kept in config.toml (`[providers.<id>] api_key`): read again by a running
server that started without one, written by `iac-code login`, removed by `iac-code logout`.
The file is rewritten whole (it stays readable by its owner only); its other settings are
kept, its comments are not."""

import tomllib
from pathlib import Path
from typing import Any

from adapters.llm.providers import normalise
from bootstrap.config_import import merge, write_private
from bootstrap.provider_settings import parse_providers
from bootstrap.toml_writer import dumps


class StoredKeysError(ValueError):
    """config.toml cannot be read, so it is not written either."""


def config_file(config_dir: Path) -> Path:
    return config_dir / "config.toml"


def read_config(config_dir: Path) -> dict[str, Any]:
    """The file's tables, or {} when there is none yet."""
    path = config_file(config_dir)
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StoredKeysError(f"{path}: {exc}") from None


def stored_key(config_dir: Path, provider: str) -> str | None:
    """The key config.toml holds for `provider` now, if any (an unreadable file holds none)."""
    try:
        configs = parse_providers(read_config(config_dir).get("providers", {}))
    except ValueError:
        return None
    config = configs.get(provider)
    return config.api_key if config else None


def store_key(config_dir: Path, provider: str, key: str) -> Path:
    """Store `key` as `provider`'s and select that provider; return the file written."""
    config = read_config(config_dir)
    table = _table_name(config, provider)
    merged = merge(config, {"provider": provider, "providers": {table: {"api_key": key}}})
    path = config_file(config_dir)
    write_private(path, dumps(merged))
    return path


def select(config_dir: Path, provider: str) -> Path:
    """Select `provider` (one that takes no key, the demo); return the file written."""
    path = config_file(config_dir)
    write_private(path, dumps(merge(read_config(config_dir), {"provider": provider})))
    return path


def remove_key(config_dir: Path, provider: str) -> bool:
    """Remove `provider`'s stored key; False when there was none."""
    config = read_config(config_dir)
    tables = config.get("providers")
    table = tables.get(_table_name(config, provider)) if isinstance(tables, dict) else None
    if not isinstance(table, dict) or "api_key" not in table:
        return False
    del table["api_key"]
    write_private(config_file(config_dir), dumps(config))
    return True


def _table_name(config: dict[str, Any], provider: str) -> str:
    """The existing table of `provider` however it is spelled (`[providers.DeepSeek]`),
    else its id."""
    tables = config.get("providers")
    names = tables if isinstance(tables, dict) else {}
    return next((str(n) for n in names if normalise(str(n)) == provider), provider)
