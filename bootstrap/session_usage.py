"""What `iac-code sessions show` says a session's turns used and cost, as table rows or JSON."""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from application.ports.session_store import TurnRecord
from domain.config import Catalog
from domain.session import Session
from domain.usage import Usage

NOTHING = "—"  # no stop reason recorded, or not priced
HEADER = [
    "TURN",
    "STARTED (UTC)",
    "STOP",
    "REQUESTS",
    "INPUT",
    "OUTPUT",
    "CACHE READ",
    "CACHE WRITE",
    "COST",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Total:
    requests: int
    usage: Usage
    cost: float | None  # None: no turn was priced


def total(turns: list[TurnRecord]) -> Total:
    usage, cost = Usage(), None
    for turn in turns:
        usage += turn.usage
        if turn.cost is not None:
            cost = (cost or 0.0) + turn.cost
    return Total(requests=sum(t.requests for t in turns), usage=usage, cost=cost)


def currency_of(catalog: Catalog, model_id: str) -> str | None:
    """The currency the session's costs were stored in: turns keep no currency, so it is the
    session's model's, or (that model not priced now) the one all priced models share."""
    prices = catalog.model(model_id).prices
    if prices is not None:
        return prices.currency
    currencies = {m.prices.currency for m in catalog.models if m.prices is not None}
    return currencies.pop() if len(currencies) == 1 else None


def money(cost: float | None, currency: str | None) -> str:
    """Six decimals: one turn of a cheap model costs fractions of a cent."""
    if cost is None:
        return NOTHING
    return f"{cost:.6f} {currency}" if currency else f"{cost:.6f}"


def turn_rows(turns: list[TurnRecord], currency: str | None) -> list[list[str]]:
    rows = [HEADER]
    for number, turn in enumerate(turns, start=1):
        stop = turn.stop_reason or ("error" if turn.error else NOTHING)
        started = turn.started_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        cost = money(turn.cost, currency)
        rows.append([str(number), started, stop, str(turn.requests), *_tokens(turn.usage), cost])
    whole = total(turns)
    rows.append(
        ["TOTAL", "", "", str(whole.requests), *_tokens(whole.usage), money(whole.cost, currency)]
    )
    return rows


def _tokens(usage: Usage) -> list[str]:
    return [
        str(usage.input_tokens),
        str(usage.output_tokens),
        str(usage.cache_read_tokens),
        str(usage.cache_write_tokens),
    ]


def session_usage_json(
    session: Session, turns: list[TurnRecord], currency: str | None
) -> dict[str, Any]:
    whole = total(turns)
    return {
        "id": session.id,
        "title": session.title,
        "cwd": session.cwd,
        "model": session.model,
        "createdAt": _time(session.created_at),
        "updatedAt": _time(session.updated_at),
        "messageCount": session.message_count,
        "currency": currency,
        "turns": [
            {
                "startedAt": _time(t.started_at),
                "finishedAt": _time(t.finished_at) if t.finished_at else None,
                "stopReason": t.stop_reason,
                "error": t.error,
                "requests": t.requests,
                **_usage_json(t.usage),
                "cost": t.cost,
            }
            for t in turns
        ],
        "total": {"requests": whole.requests, **_usage_json(whole.usage), "cost": whole.cost},
    }


def _usage_json(usage: Usage) -> dict[str, int]:
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadTokens": usage.cache_read_tokens,
        "cacheWriteTokens": usage.cache_write_tokens,
    }


def _time(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
