"""How `sessions show` sums and labels what turns used and cost."""

from application.ports.session_store import TurnRecord
from bootstrap.session_usage import currency_of, money, total, turn_rows
from domain.config import Catalog
from domain.models import ModelInfo, Prices
from domain.usage import Usage
from tests.factories import T0


def record(
    cost: float | None, *, stop: str | None = "end_turn", error: str | None = None
) -> TurnRecord:
    return TurnRecord(
        started_at=T0,
        finished_at=T0,
        stop_reason=stop,
        requests=1,
        usage=Usage(input_tokens=10, output_tokens=1),
        cost=cost,
        error=error,
    )


def catalog(*currencies: str | None) -> Catalog:
    models = tuple(
        ModelInfo(
            id=f"m{i}",
            name=f"m{i}",
            prices=None if c is None else Prices(input=1, output=1, currency=c),
        )
        for i, c in enumerate(currencies)
    )
    return Catalog(modes=(), models=models)


def test_the_total_costs_what_the_priced_turns_cost_and_nothing_priced_is_no_cost() -> None:
    assert total([record(0.5), record(None), record(0.25)]).cost == 0.75
    assert total([record(None)]).cost is None
    assert total([]).usage == Usage() and total([]).requests == 0
    assert total([record(None), record(None)]).usage == Usage(input_tokens=20, output_tokens=2)


def test_money_names_the_currency_when_known() -> None:
    assert money(0.0147, "EUR") == "0.014700 EUR"
    assert money(0.0147, None) == "0.014700"
    assert money(None, "USD") == "—"


def test_the_currency_is_the_models_or_else_the_one_all_priced_models_share() -> None:
    assert currency_of(catalog("EUR", "USD"), "m0") == "EUR"
    assert currency_of(catalog("USD", None, "USD"), "m1") == "USD"
    assert currency_of(catalog("USD", None, "EUR"), "m1") is None
    assert currency_of(catalog(None), "unknown") is None


def test_a_failed_turn_without_a_stop_reason_shows_as_an_error() -> None:
    rows = turn_rows([record(None, stop=None, error="boom"), record(None, stop=None)], None)
    assert [r[2] for r in rows[1:3]] == ["error", "—"]
    assert rows[-1][0] == "TOTAL" and rows[-1][-1] == "—"
