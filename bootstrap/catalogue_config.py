"""config.toml's `[catalogue."<model id>"]` tables, checked strictly: a typo in a price must
not silently leave the built-in one in force. Errors name the table and the key; the
settings loader adds the file."""

import math
from collections.abc import Callable, Mapping
from typing import Any

from adapters.llm.catalogue import ModelOverride, built_in


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _description(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _tokens(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be a positive whole number of tokens")
    return value


def _price(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number (per million tokens)")
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be 0 or more (per million tokens)")
    return float(value)


KEYS: dict[str, Callable[[object], Any]] = {
    "name": _text,
    "description": _description,
    "thinking": _flag,
    "images": _flag,
    "context_window": _tokens,
    "max_output_tokens": _tokens,
    "input_price": _price,
    "output_price": _price,
    "cache_read_price": _price,
    "cache_write_price": _price,
    "currency": _text,
}


def parse_catalogue(tables: object) -> dict[str, ModelOverride]:
    """The overrides of the `catalogue` table, by model id."""
    if not isinstance(tables, Mapping):
        raise ValueError('catalogue must be a table of models: [catalogue."<model id>"]')
    return {str(i): _override(str(i), t) for i, t in tables.items()}


def _override(model_id: str, table: object) -> ModelOverride:
    where = f'[catalogue."{model_id}"]'
    if not model_id.strip():
        raise ValueError(f"{where}: a model id cannot be empty")
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table of keys ({', '.join(KEYS)})")
    values: dict[str, Any] = {}
    for key, value in table.items():
        check = KEYS.get(key)
        if check is None:
            raise ValueError(f"{where}: unknown key {key!r} (known: {', '.join(KEYS)})")
        try:
            values[key] = check(value)
        except ValueError as exc:
            raise ValueError(f"{where}: {key} {exc}, not {value!r}") from None
    override = ModelOverride(**values)
    base = built_in(model_id)
    unpriced = base is None or base.prices is None
    if unpriced and override.sets_prices and not override.prices_complete:
        raise ValueError(
            f"{where}: input_price and output_price are both needed, as the model has "
            "no built-in prices"
        )
    return override
