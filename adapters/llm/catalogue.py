"""The models each provider offers, with the names people know them by, what they can do,
how much they hold and what they cost. config.toml may change any of it (ModelOverride)."""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from domain.models import ModelInfo, Prices

# Anthropic's public list prices, USD per million tokens. Cache writes are the 5-minute ones.
_SONNET = Prices(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75)
_OPUS_4_5 = Prices(input=5.0, output=25.0, cache_read=0.50, cache_write=6.25)
_HAIKU_4_5 = Prices(input=1.0, output=5.0, cache_read=0.10, cache_write=1.25)
_OPUS_4_1 = Prices(input=15.0, output=75.0, cache_read=1.50, cache_write=18.75)
_HAIKU_3_5 = Prices(input=0.80, output=4.0, cache_read=0.08, cache_write=1.00)

ANTHROPIC = (
    ModelInfo(
        id="claude-sonnet-4-5",
        name="Claude Sonnet 4.5",
        description="Best balance of speed and capability for coding.",
        max_output_tokens=64_000,
        context_window=200_000,
        prices=_SONNET,
    ),
    ModelInfo(
        id="claude-opus-4-5",
        name="Claude Opus 4.5",
        description="Most capable, for the hardest tasks.",
        max_output_tokens=64_000,
        context_window=200_000,
        prices=_OPUS_4_5,
    ),
    ModelInfo(
        id="claude-haiku-4-5",
        name="Claude Haiku 4.5",
        description="Fastest, for quick and simple tasks.",
        max_output_tokens=64_000,
        context_window=200_000,
        prices=_HAIKU_4_5,
    ),
    ModelInfo(
        id="claude-opus-4-1",
        name="Claude Opus 4.1",
        max_output_tokens=32_000,
        context_window=200_000,
        prices=_OPUS_4_1,
    ),
    ModelInfo(
        id="claude-sonnet-4-0",
        name="Claude Sonnet 4",
        max_output_tokens=64_000,
        context_window=200_000,
        prices=_SONNET,
    ),
    ModelInfo(
        id="claude-3-5-haiku-latest",
        name="Claude Haiku 3.5",
        description="Older and fast; no extended thinking.",
        thinking=False,
        max_output_tokens=8_192,
        context_window=200_000,
        prices=_HAIKU_3_5,
    ),
)

DEMO = (
    ModelInfo(
        id="demo",
        name="Demo (offline, scripted)",
        description="A scripted stand-in for a model, for trying the agent without a key.",
        context_window=200_000,  # counted in words; config.toml may shrink it to see compaction
        # No prices: it costs nothing, and no cost is reported.
    ),
)


# OpenAI, DashScope (international) and DeepSeek list prices, USD per million tokens,
# December 2026; cache_read is the cached-input price where the provider has one.
def _usd(input: float, output: float, cache_read: float = 0.0) -> Prices:
    return Prices(input=input, output=output, cache_read=cache_read)


OPENAI = (
    ModelInfo(
        id="gpt-4.1",
        name="GPT-4.1",
        thinking=False,
        context_window=1_047_576,
        max_output_tokens=32_768,
        prices=_usd(2.0, 8.0, 0.5),
    ),
    ModelInfo(
        id="gpt-4.1-mini",
        name="GPT-4.1 mini",
        thinking=False,
        context_window=1_047_576,
        max_output_tokens=32_768,
        prices=_usd(0.4, 1.6, 0.1),
    ),
    ModelInfo(
        id="gpt-4o",
        name="GPT-4o",
        thinking=False,
        context_window=128_000,
        max_output_tokens=16_384,
        prices=_usd(2.5, 10.0, 1.25),
    ),
    ModelInfo(
        id="o4-mini",
        name="o4-mini",
        reasoning_effort=True,
        context_window=200_000,
        max_output_tokens=100_000,
        prices=_usd(1.1, 4.4, 0.275),
    ),
    ModelInfo(
        id="o3",
        name="o3",
        reasoning_effort=True,
        context_window=200_000,
        max_output_tokens=100_000,
        prices=_usd(2.0, 8.0, 0.5),
    ),
)

DASHSCOPE = (
    ModelInfo(
        id="qwen3-coder-plus",
        name="Qwen3 Coder Plus",
        description="Qwen's coding model (the reference system's default).",
        thinking=False,
        images=False,
        context_window=1_000_000,
        max_output_tokens=65_536,
        prices=_usd(1.0, 5.0, 0.1),
    ),
    ModelInfo(
        id="qwen-plus",
        name="Qwen Plus",
        images=False,
        context_window=131_072,
        max_output_tokens=16_384,
        prices=_usd(0.4, 1.2),
    ),
    ModelInfo(
        id="qwen-max",
        name="Qwen Max",
        thinking=False,
        images=False,
        context_window=32_768,
        max_output_tokens=8_192,
        prices=_usd(1.6, 6.4),
    ),
    ModelInfo(
        id="qwen-vl-max",
        name="Qwen VL Max",
        description="Reads images.",
        thinking=False,
        context_window=131_072,
        max_output_tokens=8_192,
        prices=_usd(0.8, 3.2),
    ),
)

DEEPSEEK = (
    ModelInfo(
        id="deepseek-chat",
        name="DeepSeek Chat",
        thinking=False,
        images=False,
        context_window=128_000,
        max_output_tokens=8_192,
        prices=_usd(0.28, 0.42, 0.028),
    ),
    ModelInfo(
        id="deepseek-reasoner",
        name="DeepSeek Reasoner",
        description="Always reasons first; its reasoning is shown as thoughts.",
        thinking=False,  # no level to choose: it always reasons
        images=False,
        context_window=128_000,
        max_output_tokens=64_000,
        prices=_usd(0.28, 0.42, 0.028),
    ),
)

CATALOGUES = {
    "anthropic": ANTHROPIC,
    "openai": OPENAI,
    "dashscope": DASHSCOPE,
    "deepseek": DEEPSEEK,
    "openai_compatible": (),  # whatever the server hosts: named in config.toml or the env
    "demo": DEMO,
}
# Providers whose catalogue config.toml may add models to. The demo answers from its script
# whatever the model, so tables meant for a real provider do not show up in its list.
EXTENSIBLE = set(CATALOGUES) - {"demo"}

_MODEL_FIELDS = {
    f: f
    for f in ("name", "description", "thinking", "images", "context_window", "max_output_tokens")
}
_PRICE_FIELDS = {
    "input_price": "input",
    "output_price": "output",
    "cache_read_price": "cache_read",
    "cache_write_price": "cache_write",
    "currency": "currency",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelOverride:
    """One config.toml table over a model: each field that is set replaces the built-in one
    (prices per million tokens). Checked by the settings loader before it gets here."""

    name: str | None = None
    description: str | None = None
    thinking: bool | None = None
    images: bool | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    currency: str | None = None

    @property
    def sets_prices(self) -> bool:
        return bool(self._set(_PRICE_FIELDS))

    @property
    def prices_complete(self) -> bool:
        """Enough to price a model that has no built-in prices."""
        return self.input_price is not None and self.output_price is not None

    def over(self, model: ModelInfo) -> ModelInfo:
        changes = self._set(_MODEL_FIELDS)
        return replace(model, **changes, prices=self._prices(model.prices))

    def _set(self, fields: Mapping[str, str]) -> dict[str, Any]:
        """The fields set here, under their names in the built-in entry."""
        values = {theirs: getattr(self, ours) for ours, theirs in fields.items()}
        return {name: value for name, value in values.items() if value is not None}

    def _prices(self, base: Prices | None) -> Prices | None:
        given = self._set(_PRICE_FIELDS)
        if not given:
            return base
        if base is None:
            if not self.prices_complete:
                raise ValueError("a model without prices needs input_price and output_price")
            return Prices(**given)
        return replace(base, **given)


def built_in(model_id: str) -> ModelInfo | None:
    """The model's built-in entry, whichever provider lists it."""
    every = (m for models in CATALOGUES.values() for m in models)
    return next((m for m in every if m.id == model_id), None)


def catalogue(
    provider: str,
    *,
    only: tuple[str, ...] = (),
    overrides: Mapping[str, ModelOverride] | None = None,
    adds: bool | None = None,
) -> tuple[ModelInfo, ...]:
    """The provider's models with config.toml's `overrides` applied, and the models those
    add (`adds`: default, for any provider but the demo); or only those named (in that
    order; unknown names too)."""
    changes = overrides or {}
    known = CATALOGUES.get(provider, ())
    if provider in EXTENSIBLE if adds is None else adds:
        listed = {m.id for m in known}
        known = (*known, *(_unknown(i) for i in changes if i not in listed))
    if only:
        by_id = {m.id: m for m in known}
        known = tuple(by_id.get(name) or _unknown(name) for name in only)
    return tuple(changes[m.id].over(m) if m.id in changes else m for m in known)


def _unknown(model_id: str) -> ModelInfo:
    return ModelInfo(id=model_id, name=model_id)
