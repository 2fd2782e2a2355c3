"""Usage updates: each request's usage and the session's cost, a tool's spending included."""

import pytest

from application.ports.llm import ModelResponse
from application.ports.tools import ToolResult
from domain.content import TextBlock, ToolUseBlock
from domain.events import UsageUpdated
from domain.permission import PermissionOption
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.factories import T0
from tests.unit.application.compaction.support import PRICES, WINDOW, answer
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


async def test_each_request_is_followed_by_its_usage_and_the_session_cost(small: World) -> None:
    sid = await open_session(small)
    use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": "a"})
    first = Usage(input_tokens=1_000, output_tokens=100, cache_read_tokens=400)
    second = Usage(input_tokens=1_200, output_tokens=300, cache_write_tokens=50)
    third = Usage(input_tokens=2_000, output_tokens=10)
    small.llm.scripts = [
        [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=first)],
        [ModelResponse(content=(TextBlock(text="ok"),), stop=ModelStop.END_TURN, usage=second)],
        [ModelResponse(content=(TextBlock(text="ok"),), stop=ModelStop.END_TURN, usage=third)],
    ]

    await small.prompt().execute(ask(sid, "read a"))
    await small.prompt().execute(ask(sid, "again"))

    updates = small.sink.of_type(UsageUpdated)
    assert [u.used for u in updates] == [1_500, 1_550, 2_010]  # type: ignore[attr-defined]
    assert {u.size for u in updates} == {WINDOW}  # type: ignore[attr-defined]
    assert {u.currency for u in updates} == {"EUR"}  # type: ignore[attr-defined]
    costs = [u.cost for u in updates]  # type: ignore[attr-defined]
    # Per million tokens, summed over the session.
    one = (1_000 * 3.0 + 100 * 15.0 + 400 * 0.3) / 1_000_000
    two = one + (1_200 * 3.0 + 300 * 15.0 + 50 * 3.75) / 1_000_000
    three = two + (2_000 * 3.0 + 10 * 15.0) / 1_000_000
    assert costs == [pytest.approx(one), pytest.approx(two), pytest.approx(three)]
    session = small.registry.require(sid).session
    assert session.spent == first + second + third
    assert session.cost == pytest.approx(three)


async def test_a_model_without_prices_reports_no_cost(small: World) -> None:
    sid = await open_session(small)
    small.registry.require(sid).session.choose_model("m2", at=T0)
    small.llm.scripts = [answer("ok", 1_000)]
    await small.prompt().execute(ask(sid))
    (update,) = small.sink.of_type(UsageUpdated)
    assert isinstance(update, UsageUpdated)
    assert update.used == 1_100 and update.cost is None and update.currency == "USD"
    _, turn, _ = small.uow.sessions.turns[-1]
    assert turn.cost is None


async def test_what_a_tool_spent_on_the_model_counts_in_the_turn_and_its_cost(
    small: World,
) -> None:
    delegated = Usage(input_tokens=4_000, output_tokens=400)

    async def agent(_arguments: object) -> ToolResult:
        return ToolResult(text="the sub-agent's answer", usage=delegated)

    small.tools.tools["agent"] = agent  # type: ignore[assignment]
    small.asker.answers = [PermissionOption.ALLOW_ONCE]
    sid = await open_session(small)
    use = ToolUseBlock(id="toolu_1", name="agent", input={"prompt": "research"})
    own = Usage(input_tokens=100, output_tokens=10)
    small.llm.scripts = [
        [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=own)],
        [ModelResponse(content=(TextBlock(text="ok"),), stop=ModelStop.END_TURN, usage=own)],
    ]

    result = await small.prompt().execute(ask(sid, "delegate"))

    assert result.usage == own + delegated + own
    session = small.registry.require(sid).session
    assert session.cost == pytest.approx(PRICES.cost(own + delegated + own))
