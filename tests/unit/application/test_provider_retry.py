"""The turn's provider retries (application/agent_loop/provider_retry.py) with a scripted model
and a sleep that passes no time: what is asked again, how each wait is told, how it ends."""

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from application.agent_loop.provider_retry import QuietRetry, RetryTerms
from application.errors import (
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
    ModelUsageLimited,
)
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, TextChunk
from application.sessions.new_session import NewSessionRequest
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.events import AgentEvent, NoticeSeverity, SessionNotice, TextDelta
from domain.stop_reason import ModelStop, StopReason
from domain.usage import Usage
from tests.fakes.turn import ScriptedLLM
from tests.support.patience import PATIENCE
from tests.unit.application.world import World

TERMS = RetryTerms(max_retries=4, budget_seconds=120.0, tick_seconds=10.0)


def reply(text: str) -> list[ModelEvent]:
    usage = Usage(input_tokens=3, output_tokens=2)
    return [
        TextChunk(text=text),
        ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage),
    ]


def limited(seconds: float | None) -> ModelRateLimited:
    error = ModelRateLimited("Rate limited by the provider: slow down", status=429)
    error.retry_after = seconds
    return error


class Sleeps:
    """Records each wait and passes no time."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def sleeps(world: World) -> Sleeps:
    recorded = Sleeps()
    world.retry_terms = TERMS
    world.sleep = recorded
    return recorded


async def open_session(world: World) -> str:
    state = await world.new_session().execute(NewSessionRequest(cwd="/home/dev/p"))
    return state.session_id


def ask(session_id: str) -> PromptRequest:
    return PromptRequest(session_id=session_id, content=(TextBlock(text="hi"),))


def notices(world: World) -> list[SessionNotice]:
    return [e for e in world.sink.of_type(SessionNotice) if isinstance(e, SessionNotice)]


def retry_meta(notice: SessionNotice) -> dict[str, object]:
    meta = notice.meta["retry"]
    assert isinstance(meta, dict)
    return meta


async def test_two_rate_limits_with_retry_after_then_the_reply(
    world: World, sleeps: Sleeps
) -> None:
    world.llm.scripts = [limited(2), limited(2), reply("made it")]
    sid = await open_session(world)

    result = await world.prompt().execute(ask(sid))

    assert result.stop_reason is StopReason.END_TURN
    assert [r.attempt for r in world.llm.requests] == [1, 2, 3]
    assert sleeps.waits == [2, 2]
    told = notices(world)
    assert [n.severity for n in told] == [NoticeSeverity.WARNING] * 2
    assert [retry_meta(n)["secondsLeft"] for n in told] == [2, 2]
    assert [retry_meta(n)["attempt"] for n in told] == [2, 3]
    assert {retry_meta(n)["maxAttempts"] for n in told} == {5}
    assert {retry_meta(n)["reason"] for n in told} == {"rate_limited"}
    assert "retrying in 2 s (attempt 2 of 5)" in told[0].title
    # a client without notices reads one line per wait
    assert all(n.fallback is not None and "retrying in 2 s" in n.fallback.text for n in told)
    # and the order: both waits told before the reply's text
    kinds = [type(e) for _, e in world.sink.events if isinstance(e, SessionNotice | TextDelta)]
    assert kinds == [SessionNotice, SessionNotice, TextDelta]


async def test_a_long_wait_is_a_countdown_never_silent_for_a_tick(
    world: World, sleeps: Sleeps
) -> None:
    world.llm.scripts = [limited(25), reply("ok")]
    sid = await open_session(world)

    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN

    assert sleeps.waits == [10, 10, 5]  # no sleep longer than a tick
    told = notices(world)
    assert [retry_meta(n)["secondsLeft"] for n in told] == [25, 15, 5]
    assert [n.fallback is not None for n in told] == [True, False, False]  # text once


async def test_cancel_during_a_wait_ends_the_turn_cancelled_at_once(world: World) -> None:
    world.retry_terms = TERMS
    waiting = asyncio.Event()

    async def forever(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    world.sleep = forever
    world.llm.scripts = [limited(2), reply("never asked")]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    await asyncio.wait_for(waiting.wait(), PATIENCE)
    world.cancel().execute(sid)

    result = await asyncio.wait_for(running, PATIENCE)

    assert result.stop_reason is StopReason.CANCELLED
    assert len(world.llm.requests) == 1
    assert len(notices(world)) == 1


async def test_outages_back_off_then_the_error_names_every_try(world: World) -> None:
    world.retry_terms = RetryTerms(max_retries=2)
    recorded = Sleeps()
    world.sleep = recorded
    down = [ModelUnavailable("Could not reach the provider.", url="u", attempts=1)] * 3
    world.llm.scripts = list(down)
    sid = await open_session(world)

    with pytest.raises(ModelUnavailable) as caught:
        await world.prompt().execute(ask(sid))

    assert recorded.waits == [1, 2]
    assert caught.value.details["attempts"] == 3
    assert [retry_meta(n)["reason"] for n in notices(world)[:2]] == ["unavailable"] * 2
    final = notices(world)[-1]
    assert final.severity is NoticeSeverity.ERROR
    assert final.fallback is not None and "[model provider error: " in final.fallback.text


async def test_a_usage_limit_ends_the_turn_at_once_saying_when(
    world: World, sleeps: Sleeps
) -> None:
    error = ModelUsageLimited("The provider's usage limit is reached: quota", status=429)
    error.retry_after = 3600
    world.llm.scripts = [error]
    sid = await open_session(world)
    before = world.clock.now()  # the fake clock moves a second at every reading

    with pytest.raises(ModelUsageLimited) as caught:
        await world.prompt().execute(ask(sid))

    assert len(world.llm.requests) == 1 and sleeps.waits == []
    retry_at = datetime.fromisoformat(str(caught.value.details["retryAt"]))
    assert 3600 < (retry_at - before).total_seconds() < 3600 + 60
    assert caught.value.details["retryAfter"] == 3600
    (notice,) = notices(world)
    assert notice.severity is NoticeSeverity.ERROR
    assert notice.title.startswith("Usage limit reached: try again after ")
    assert notice.meta["providerError"] == {
        "kind": "usage_limit",
        "retryAt": caught.value.details["retryAt"],
    }


async def test_a_rate_limit_past_the_budget_is_a_usage_limit(world: World, sleeps: Sleeps) -> None:
    world.llm.scripts = [limited(600)]
    sid = await open_session(world)

    with pytest.raises(ModelUsageLimited) as caught:
        await world.prompt().execute(ask(sid))

    assert sleeps.waits == []
    assert caught.value.kind == "usage_limit"
    assert "try again after" in str(caught.value)


async def test_the_budget_bounds_the_waits_in_all(world: World, sleeps: Sleeps) -> None:
    world.retry_terms = RetryTerms(max_retries=10, budget_seconds=5.0)
    world.llm.scripts = [ModelUnavailable("down")] * 4
    sid = await open_session(world)

    with pytest.raises(ModelUnavailable):
        await world.prompt().execute(ask(sid))

    assert sleeps.waits == [1, 2]  # 1 + 2 + 4 would pass 5 s
    assert len(world.llm.requests) == 3


@pytest.mark.parametrize(
    "error",
    [
        ModelRequestRejected("bad request", status=400),
        ModelError("odd"),
    ],
)
async def test_what_asking_again_cannot_fix_is_not_asked_again(
    world: World, sleeps: Sleeps, error: ModelError
) -> None:
    world.llm.scripts = [error]
    sid = await open_session(world)
    with pytest.raises(type(error)):
        await world.prompt().execute(ask(sid))
    assert len(world.llm.requests) == 1 and sleeps.waits == []


async def test_a_reply_that_began_is_never_asked_again(world: World, sleeps: Sleeps) -> None:
    async def breaks(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextChunk(text="Half")
        raise ModelUnavailable("The provider's answer broke off")

    world.llm.scripts = [breaks, reply("twice?")]
    sid = await open_session(world)
    with pytest.raises(ModelUnavailable):
        await world.prompt().execute(ask(sid))
    assert len(world.llm.requests) == 1 and sleeps.waits == []


async def test_a_short_wait_passes_untold(world: World, sleeps: Sleeps) -> None:
    world.llm.scripts = [limited(0.001), reply("ok")]
    sid = await open_session(world)
    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN
    assert sleeps.waits == [0.001]
    assert notices(world) == []


async def test_requests_outside_a_turn_are_asked_again_quietly() -> None:
    recorded = Sleeps()
    inner = ScriptedLLM(limited(2), ModelUnavailable("down"), reply("summary"))
    quiet = QuietRetry(llm=inner, terms=TERMS, sleep=recorded)
    request = ModelRequest(model="m", system="", messages=(), max_tokens=10)

    events: list[AgentEvent | ModelEvent] = [e async for e in quiet.stream(request)]

    assert isinstance(events[-1], ModelResponse)
    assert recorded.waits == [2, 2]  # the provider's wait, then the second backoff
    assert [r.attempt for r in inner.requests] == [1, 2, 3]


async def test_the_provider_saying_do_not_retry_is_heard(world: World, sleeps: Sleeps) -> None:
    error = ModelUnavailable("The provider failed (500): boom", status=500)
    error.should_retry = False
    world.llm.scripts = [error]
    sid = await open_session(world)
    with pytest.raises(ModelUnavailable):
        await world.prompt().execute(ask(sid))
    assert len(world.llm.requests) == 1


async def test_a_request_timeout_is_asked_again_as_the_sdks_did(
    world: World, sleeps: Sleeps
) -> None:
    world.llm.scripts = [ModelRequestRejected("timeout", status=408), reply("ok")]
    sid = await open_session(world)
    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN
    assert sleeps.waits == [1]
