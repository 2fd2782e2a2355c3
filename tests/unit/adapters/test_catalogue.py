"""The model catalogue as data, and config.toml's overrides merged over it."""

import pytest

from adapters.llm.catalogue import ANTHROPIC, ModelOverride, built_in, catalogue
from domain.models import Prices
from domain.usage import Usage

MILLION = Usage(
    input_tokens=1_000_000,
    output_tokens=1_000_000,
    cache_read_tokens=1_000_000,
    cache_write_tokens=1_000_000,
)


def test_every_anthropic_model_has_a_window_and_prices_and_the_demo_costs_nothing() -> None:
    for model in catalogue("anthropic"):
        assert model.context_window > 0 and model.prices is not None, model.id
        assert model.prices.currency == "USD"
    (demo,) = catalogue("demo")
    assert demo.context_window > 0
    assert demo.prices is None and demo.cost(MILLION) is None


def test_a_million_of_each_costs_the_sum_of_the_list_prices() -> None:
    sonnet = built_in("claude-sonnet-4-5")
    assert sonnet is not None
    assert sonnet.cost(MILLION) == pytest.approx(3 + 15 + 0.30 + 3.75)
    haiku = built_in("claude-3-5-haiku-latest")
    assert haiku is not None
    assert haiku.cost(Usage(input_tokens=500_000, output_tokens=250_000)) == pytest.approx(1.4)


def test_an_override_changes_only_the_fields_it_sets() -> None:
    overrides = {
        "claude-sonnet-4-5": ModelOverride(
            context_window=1_000_000, input_price=6.0, name="Claude Sonnet 4.5 (1M)"
        )
    }
    models = {m.id: m for m in catalogue("anthropic", overrides=overrides)}
    sonnet = models["claude-sonnet-4-5"]
    assert (sonnet.name, sonnet.context_window) == ("Claude Sonnet 4.5 (1M)", 1_000_000)
    assert sonnet.prices == Prices(input=6.0, output=15.0, cache_read=0.30, cache_write=3.75)
    assert sonnet.description == built_in("claude-sonnet-4-5").description  # type: ignore[union-attr]
    assert sonnet.max_output_tokens == 64_000
    assert models["claude-opus-4-5"] == built_in("claude-opus-4-5")  # others untouched
    assert [m.id for m in catalogue("anthropic", overrides=overrides)] == [m.id for m in ANTHROPIC]


def test_a_table_for_an_unknown_id_adds_a_model_to_a_real_provider_only() -> None:
    added = ModelOverride(name="Local", context_window=32_000, input_price=1, output_price=2)
    overrides = {"local-model": added}
    models = catalogue("anthropic", overrides=overrides)
    assert models[-1].id == "local-model" and len(models) == len(ANTHROPIC) + 1
    assert (models[-1].name, models[-1].context_window) == ("Local", 32_000)
    assert models[-1].prices == Prices(input=1, output=2)
    (only,) = catalogue("anthropic", only=("local-model",), overrides=overrides)
    assert only == models[-1]
    assert [m.id for m in catalogue("demo", overrides=overrides)] == ["demo"]


def test_named_models_get_their_overrides_too() -> None:
    overrides = {
        "claude-test": ModelOverride(input_price=2, output_price=4),
        "demo": ModelOverride(context_window=4_000),
    }
    unknown, haiku = catalogue(
        "anthropic", only=("claude-test", "claude-haiku-4-5"), overrides=overrides
    )
    assert unknown.cost(Usage(input_tokens=1_000_000, output_tokens=500_000)) == 4.0
    assert haiku == built_in("claude-haiku-4-5")
    assert catalogue("demo", overrides=overrides)[0].context_window == 4_000


def test_a_model_without_prices_cannot_be_half_priced() -> None:
    with pytest.raises(ValueError, match="input_price and output_price"):
        catalogue("demo", overrides={"demo": ModelOverride(input_price=1)})
    (priced,) = catalogue("demo", overrides={"demo": ModelOverride(input_price=1, output_price=3)})
    assert priced.prices == Prices(input=1, output=3)
