"""Compaction in a prompt turn and by /compact, and the usage updates after each request.

The model here has a 10,000-token window; compaction starts past half of it (5,000) and a
request fits while it and its longest answer (1,000 tokens) stay within the window."""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from application.compaction.compactor import SUMMARY_MAX_TOKENS
from application.compaction.context_meter import CompactionPolicy
from application.errors import ContextOverflow, ModelRequestRejected, ModelUnavailable
from application.ports.llm import ModelRequest, ModelResponse, TextChunk, ThinkingChunk
from application.ports.tools import ToolResult
from application.sessions.load_session import LoadSessionRequest
from application.turn.prompt import PromptRequest
from domain.compaction import SUMMARY_SYSTEM, instruction
from domain.config import Catalog
from domain.content import TextBlock, ToolUseBlock
from domain.context import SUMMARY_HEADING, context_estimate, estimate_tokens
from domain.events import (
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    Notice,
    SessionNotice,
    TextDelta,
    UsageUpdated,
)
from domain.message import Message, MessageKind, Role
from domain.models import ModelInfo, Prices
from domain.modes import offered_modes
from domain.permission import PermissionOption
from domain.stop_reason import ModelStop, StopReason
from domain.usage import Usage
from tests.factories import T0
from tests.unit.application.conftest import World
from tests.unit.application.test_prompt import ask, open_session

WINDOW = 10_000
PRICES = Prices(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, currency="EUR")
SMALL = Catalog(
    modes=offered_modes(allow_bypass=True),
    models=(
        ModelInfo(id="m1", name="M1", context_window=WINDOW, prices=PRICES),
        ModelInfo(id="m2", name="M2", context_window=WINDOW),
    ),
)


@pytest.fixture
def small(world: World) -> World:
    world.catalog = SMALL
    world.policy = CompactionPolicy(compact_at=0.5, keep_turns=2)
    return world


def answer(text: str, input_tokens: int, output_tokens: int = 100) -> list:
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return [
        TextChunk(text=text),
        ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage),
    ]


def summary(text: str = "SUMMARY: they fixed the parser.", input_tokens: int = 300) -> list:
    usage = Usage(input_tokens=input_tokens, output_tokens=50)
    return [ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage)]


def chat_texts(messages: tuple[Message, ...] | list[Message]) -> list[list[str]]:
    return [[b.text for b in m.content if isinstance(b, TextBlock)] for m in messages]


def stored(world: World, sid: str) -> list[Message]:
    return world.uow.sessions.messages[sid]  # type: ignore[index]


def overhead(world: World, sid: str) -> int:
    return world.requests().overhead(world.registry.require(sid).session)


async def two_turns(world: World, sid: str, last_context: int) -> None:
    """Two finished turns; the second reply's request counted `last_context` tokens."""
    world.llm.scripts = [
        answer("first answer", 1_000),
        answer("second answer", last_context - 100),
    ]
    await world.prompt().execute(ask(sid, "first question"))
    await world.prompt().execute(ask(sid, "second question"))


# Compaction before a request


async def test_a_context_past_the_threshold_is_compacted_before_the_request(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [summary(), answer("third answer", 2_000)]
    events_before = len(small.sink.events)

    result = await small.prompt().execute(ask(sid, "third question"))

    assert result.stop_reason is StopReason.END_TURN
    history = stored(small, sid)
    assert [m.kind for m in history].count(MessageKind.COMPACTION) == 1
    _, _, u2, _, u3, marker, a3 = history
    assert marker.kind is MessageKind.COMPACTION and marker.role is Role.ASSISTANT
    assert marker.visible_text() == "SUMMARY: they fixed the parser."
    facts = marker.compaction
    assert facts is not None and facts.keep_from == u2.id and facts.focus is None
    assert facts.tokens_before == 5_200 + estimate_tokens([u3])
    assert facts.tokens_after == context_estimate(history[:6], overhead=overhead(small, sid))
    assert facts.tokens_after < facts.tokens_before

    # The summary request: the older turn as a transcript plus the instruction, no tools.
    summary_request = small.llm.requests[2]
    assert summary_request.system == SUMMARY_SYSTEM
    assert summary_request.tools == ()
    assert summary_request.max_tokens == SUMMARY_MAX_TOKENS
    assert summary_request.thinking_budget == 0
    (only,) = summary_request.messages
    assert only.role is Role.USER
    text = only.visible_text()
    assert "User:\nfirst question" in text and "Assistant:\nfirst answer" in text
    assert "second question" not in text and "third question" not in text
    assert text.endswith("\n\n---\n\n" + instruction(None))

    # The turn's request: the summary, then the kept turn and the new prompt.
    assert chat_texts(small.llm.requests[3].messages) == [
        [SUMMARY_HEADING + "SUMMARY: they fixed the parser.", "second question"],
        ["second answer"],
        ["third question"],
    ]

    # Shown: the compaction under the marker's id (started, its summary, completed with
    # the meter's counts), the new size, then the reply and its usage.
    shown = [e for _, e in small.sink.events[events_before:]]
    started = CompactionChanged(
        compaction_id=marker.id,
        status=CompactionStatus.IN_PROGRESS,
        tokens_before=facts.tokens_before,
        window=WINDOW,
    )
    assert shown[:3] == [
        started,
        CompactionSummaryDelta(compaction_id=marker.id, text="SUMMARY: they fixed the parser."),
        replace(started, status=CompactionStatus.COMPLETED, tokens_after=facts.tokens_after),
    ]
    assert facts.window == WINDOW
    assert [type(e) for e in shown[3:]] == [UsageUpdated, TextDelta, UsageUpdated]
    assert isinstance(shown[3], UsageUpdated) and shown[3].used == facts.tokens_after
    assert shown[3].size == WINDOW
    assert isinstance(shown[5], UsageUpdated) and shown[5].used == 2_100
    assert a3.context_tokens == 2_100

    # The summary's usage counts in the turn (but is not one of its requests).
    assert result.usage == Usage(input_tokens=2_300, output_tokens=150)
    _, turn, error = small.uow.sessions.turns[-1]
    assert error is None and turn.requests == 1 and turn.usage == result.usage
    assert turn.cost == pytest.approx(PRICES.cost(result.usage))


async def test_the_turn_after_a_compaction_carries_the_summary_and_the_kept_turns(
    small: World,
) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [summary(), answer("third answer", 2_000), answer("fourth answer", 2_500)]
    await small.prompt().execute(ask(sid, "third question"))

    await small.prompt().execute(ask(sid, "fourth question"))

    assert len(small.llm.requests) == 5  # no second compaction: the new count is small
    assert chat_texts(small.llm.requests[4].messages) == [
        [SUMMARY_HEADING + "SUMMARY: they fixed the parser.", "second question"],
        ["second answer"],
        ["third question"],
        ["third answer"],
        ["fourth question"],
    ]


async def test_below_the_threshold_nothing_is_compacted(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=4_000)
    small.llm.scripts = [answer("third answer", 4_500)]
    await small.prompt().execute(ask(sid, "third question"))
    assert len(small.llm.requests) == 3
    assert all(m.is_chat for m in stored(small, sid))
    assert len(small.llm.requests[2].messages) == 5


async def test_a_context_that_would_not_leave_room_for_the_answer_is_compacted(
    world: World,
) -> None:
    # The threshold is never reached (compact_at 1.0): the answer's room decides.
    world.catalog = SMALL
    world.policy = CompactionPolicy(compact_at=1.0, keep_turns=1)
    sid = await open_session(world)
    await two_turns(world, sid, last_context=9_500)
    world.llm.scripts = [summary(), answer("third answer", 2_000)]
    await world.prompt().execute(ask(sid, "third question"))
    assert world.llm.requests[2].system == SUMMARY_SYSTEM
    assert chat_texts(world.llm.requests[3].messages)[0][0].startswith(SUMMARY_HEADING)


# The provider's own overflow


async def test_an_overflow_on_the_first_try_compacts_once_and_retries(small: World) -> None:
    small.policy = CompactionPolicy(compact_at=0.5, keep_turns=1)
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)  # the estimate sees no need
    small.llm.scripts = [ContextOverflow(), summary(), answer("third answer", 2_000)]

    result = await small.prompt().execute(ask(sid, "third question"))

    assert result.stop_reason is StopReason.END_TURN
    first_try, summary_request, retry = small.llm.requests[2:]
    assert chat_texts(first_try.messages)[-1] == ["third question"]
    assert summary_request.system == SUMMARY_SYSTEM
    assert chat_texts(retry.messages) == [
        [SUMMARY_HEADING + "SUMMARY: they fixed the parser.", "third question"]
    ]
    kinds = [m.kind for m in stored(small, sid)]
    assert kinds.count(MessageKind.COMPACTION) == 1
    assert [m.visible_text() for m in stored(small, sid) if m.role is Role.ASSISTANT][-1] == (
        "third answer"
    )
    _, turn, _ = small.uow.sessions.turns[-1]
    assert turn.requests == 1  # the refused try is not a request the turn made


async def test_a_second_overflow_after_compacting_is_the_provider_error(small: World) -> None:
    small.policy = CompactionPolicy(compact_at=0.5, keep_turns=1)
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)
    small.llm.scripts = [ContextOverflow(), summary(), ContextOverflow("still too long")]

    with pytest.raises(ContextOverflow):
        await small.prompt().execute(ask(sid, "third question"))

    assert len(small.llm.requests) == 5  # one compaction, one retry, no more
    assert [m.kind for m in stored(small, sid)].count(MessageKind.COMPACTION) == 1
    assert any(
        "still too long" in (n.description or "")  # type: ignore[union-attr]
        for n in small.sink.of_type(SessionNotice)
    )


async def test_an_overflow_with_nothing_to_compact_ends_the_turn_and_says_why(
    small: World,
) -> None:
    sid = await open_session(small)
    small.llm.scripts = [ContextOverflow()]

    result = await small.prompt().execute(ask(sid, "a very long paste"))

    assert result.stop_reason is StopReason.END_TURN
    assert len(small.llm.requests) == 1
    notice = small.sink.of_type(Notice)[-1]
    assert isinstance(notice, Notice)
    assert "no longer fits in m1's context window" in notice.text
    assert "nothing older to summarise" in notice.text
    assert chat_texts(stored(small, sid)) == [["a very long paste"]]  # nothing lost


# A summary request that fails


async def test_a_failed_summary_with_room_left_goes_on_uncompacted(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [ModelUnavailable("boom"), answer("third answer", 5_500)]

    result = await small.prompt().execute(ask(sid, "third question"))

    assert result.stop_reason is StopReason.END_TURN
    assert small.llm.requests[2].system == SUMMARY_SYSTEM
    assert chat_texts(small.llm.requests[3].messages) == [
        ["first question"],
        ["first answer"],
        ["second question"],
        ["second answer"],
        ["third question"],
    ]
    assert all(m.is_chat for m in stored(small, sid))
    notices = [n.text for n in small.sink.of_type(Notice)]  # type: ignore[attr-defined]
    assert "\n\n[Context not compacted (compaction failed: boom); going on.]\n\n" in notices


async def test_a_failed_summary_is_not_tried_again_at_each_request_of_the_turn(
    small: World,
) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": "a"})
    usage = Usage(input_tokens=5_300, output_tokens=50)
    small.llm.scripts = [
        ModelUnavailable("boom"),
        [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=usage)],
        answer("third answer", 5_500),
    ]

    result = await small.prompt().execute(ask(sid, "third question"))

    assert result.stop_reason is StopReason.END_TURN
    systems = [r.system for r in small.llm.requests[2:]]
    assert systems.count(SUMMARY_SYSTEM) == 1 and len(systems) == 3
    notices = [n.text for n in small.sink.of_type(Notice)]  # type: ignore[attr-defined]
    assert sum("Context not compacted" in n for n in notices) == 1


async def test_a_failed_summary_without_room_ends_the_turn_and_loses_nothing(
    small: World,
) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=9_500)
    small.llm.scripts = [ModelUnavailable("boom")]

    result = await small.prompt().execute(ask(sid, "third question"))

    assert result.stop_reason is StopReason.END_TURN
    assert len(small.llm.requests) == 3  # the summary was tried; the request was not sent
    assert chat_texts(stored(small, sid)) == [
        ["first question"],
        ["first answer"],
        ["second question"],
        ["second answer"],
        ["third question"],
    ]
    notice = small.sink.of_type(Notice)[-1]
    assert isinstance(notice, Notice)
    assert "no longer fits in m1's context window and compaction failed: boom." in notice.text
    assert "Nothing was lost" in notice.text
    _, turn, error = small.uow.sessions.turns[-1]
    assert turn.stop_reason is StopReason.END_TURN and error is None


async def test_an_empty_summary_is_a_failed_compaction(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [summary("   "), answer("third answer", 5_500)]
    await small.prompt().execute(ask(sid, "third question"))
    assert all(m.is_chat for m in stored(small, sid))
    notices = [n.text for n in small.sink.of_type(Notice)]  # type: ignore[attr-defined]
    assert any("compaction failed: the model wrote no summary" in n for n in notices)


# What the client is shown of a compaction


def compaction_events(world: World) -> list[CompactionChanged | CompactionSummaryDelta]:
    return [
        e for _, e in world.sink.events if isinstance(e, CompactionChanged | CompactionSummaryDelta)
    ]


async def test_a_streamed_summary_is_shown_as_the_model_writes_it(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    usage = Usage(input_tokens=300, output_tokens=50)
    whole = TextBlock(text="SUMMARY: they fixed the parser.")
    streamed = [
        TextChunk(text="SUMMARY: they"),
        TextChunk(text=" fixed the parser."),
        ModelResponse(content=(whole,), stop=ModelStop.END_TURN, usage=usage),
    ]
    small.llm.scripts = [streamed, answer("third answer", 2_000)]

    await small.prompt().execute(ask(sid, "third question"))

    started, first, second, completed = compaction_events(small)
    marker = stored(small, sid)[-2]
    assert marker.kind is MessageKind.COMPACTION and marker.compaction is not None
    ids = {e.compaction_id for e in (started, first, second, completed)}
    assert ids == {marker.id}
    assert isinstance(first, CompactionSummaryDelta) and first.text == "SUMMARY: they"
    assert isinstance(second, CompactionSummaryDelta) and second.text == " fixed the parser."
    assert isinstance(completed, CompactionChanged)
    assert completed.status is CompactionStatus.COMPLETED
    assert completed.tokens_after == marker.compaction.tokens_after


async def test_a_failed_summary_shows_the_compaction_failed_with_its_error(
    small: World,
) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [ModelUnavailable("boom"), answer("third answer", 5_500)]

    await small.prompt().execute(ask(sid, "third question"))

    started, failed = compaction_events(small)
    assert isinstance(started, CompactionChanged) and isinstance(failed, CompactionChanged)
    assert started.status is CompactionStatus.IN_PROGRESS and started.window == WINDOW
    assert failed == replace(started, status=CompactionStatus.FAILED, error="boom")
    assert all(m.is_chat for m in stored(small, sid))  # nothing stored under its id


async def test_a_cancel_while_summarising_shows_the_compaction_cancelled(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    asked = asyncio.Event()

    async def hang(_: ModelRequest) -> AsyncIterator:
        yield TextChunk(text="SUMMARY: the")
        asked.set()
        await asyncio.Event().wait()

    small.llm.scripts = [hang]
    running = asyncio.create_task(small.prompt().execute(ask(sid, "third question")))
    await asked.wait()
    small.cancel().execute(sid)

    result = await asyncio.wait_for(running, 1)

    assert result.stop_reason is StopReason.CANCELLED
    started, chunk, cancelled = compaction_events(small)
    assert isinstance(started, CompactionChanged) and isinstance(cancelled, CompactionChanged)
    assert chunk == CompactionSummaryDelta(compaction_id=started.compaction_id, text="SUMMARY: the")
    assert cancelled == replace(started, status=CompactionStatus.CANCELLED)


async def test_nothing_to_compact_shows_no_compaction(small: World) -> None:
    sid = await open_session(small)
    small.llm.scripts = [answer("first answer", 1_000)]
    await small.prompt().execute(ask(sid, "first question"))

    await small.prompt().execute(ask(sid, "/compact"))

    assert compaction_events(small) == []


async def test_a_load_replays_each_compaction_as_it_was_shown_live(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    small.llm.scripts = [summary(), answer("third answer", 2_000)]
    await small.prompt().execute(ask(sid, "third question"))
    live = compaction_events(small)
    await small.close().execute(sid)
    small.sink.events.clear()

    await small.load().execute(LoadSessionRequest(session_id=sid, cwd="/home/dev/p"))

    replayed = [e for _, e in small.sink.events]
    assert compaction_events(small) == live
    # In history order: after the reply before it, before the reply after it.
    texts = [e.text for e in replayed if isinstance(e, TextDelta)]
    assert texts == ["first answer", "second answer", "third answer"]
    at = replayed.index(live[0])
    assert replayed.index(TextDelta(message_id=stored(small, sid)[3].id, text="second answer")) < at
    assert at < replayed.index(TextDelta(message_id=stored(small, sid)[-1].id, text="third answer"))


# Usage updates


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


# /compact


async def test_compact_command_with_a_focus(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)
    small.llm.scripts = [answer("third answer", 1_800), summary(input_tokens=700)]
    await small.prompt().execute(ask(sid, "third question"))
    events_before = len(small.sink.events)

    result = await small.prompt().execute(ask(sid, "/compact  the parser's tests "))

    assert result.stop_reason is StopReason.END_TURN
    assert result.usage == Usage(input_tokens=700, output_tokens=50)
    request = small.llm.requests[-1]
    assert request.system == SUMMARY_SYSTEM and request.tools == ()
    text = request.messages[0].visible_text()
    assert text.endswith(instruction("the parser's tests"))
    assert "first question" in text and "second question" not in text
    history = stored(small, sid)
    command, marker = history[-2:]
    assert command.kind is MessageKind.COMMAND and command.role is Role.USER
    assert command.visible_text() == "/compact  the parser's tests "
    assert marker.kind is MessageKind.COMPACTION and marker.compaction is not None
    assert marker.compaction.focus == "the parser's tests"
    assert marker.compaction.keep_from == history[2].id  # the second question
    # The compactor showed the compaction; the command adds no answer of its own.
    shown = [type(e) for _, e in small.sink.events[events_before:]]
    assert shown == [CompactionChanged, CompactionSummaryDelta, CompactionChanged, UsageUpdated]
    _, turn, _ = small.uow.sessions.turns[-1]
    assert turn.requests == 0 and turn.usage == result.usage
    session = small.registry.require(sid).session
    assert session.spent.input_tokens == 1_000 + 1_400 + 1_800 + 700

    small.llm.scripts = [answer("fourth answer", 1_000)]
    await small.prompt().execute(ask(sid, "fourth question"))
    assert chat_texts(small.llm.requests[-1].messages) == [
        [SUMMARY_HEADING + "SUMMARY: they fixed the parser.", "second question"],
        ["second answer"],
        ["third question"],
        ["third answer"],
        ["fourth question"],
    ]


async def test_compact_command_with_nothing_to_compact(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)

    result = await small.prompt().execute(ask(sid, "/compact"))

    assert result.stop_reason is StopReason.END_TURN
    assert len(small.llm.requests) == 2  # no summary was asked for
    history = stored(small, sid)
    assert [m.kind for m in history[-2:]] == [MessageKind.COMMAND, MessageKind.COMMAND_OUTPUT]
    expected = (
        "Nothing to compact yet: the context holds no more than the last 2 turns, which "
        "compaction keeps as they are."
    )
    assert history[-1].visible_text() == expected
    assert small.sink.of_type(Notice)[-1] == Notice(message_id=history[-1].id, text=expected)


async def test_compact_command_whose_summary_fails_changes_nothing(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)
    small.llm.scripts = [answer("third answer", 1_800), ModelUnavailable("boom")]
    await small.prompt().execute(ask(sid, "third question"))

    await small.prompt().execute(ask(sid, "/compact"))

    history = stored(small, sid)
    assert MessageKind.COMPACTION not in [m.kind for m in history]
    assert history[-1].visible_text() == (
        "Compaction failed (boom). Nothing changed: the context is as it was."
    )


async def test_compact_command_cancelled_while_summarising(small: World) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)
    asked = asyncio.Event()

    async def hang(_: ModelRequest) -> AsyncIterator:
        asked.set()
        await asyncio.Event().wait()
        yield TextChunk(text="unreachable")

    small.llm.scripts = [answer("third answer", 1_800), hang]
    await small.prompt().execute(ask(sid, "third question"))
    running = asyncio.create_task(small.prompt().execute(ask(sid, "/compact")))
    await asked.wait()
    small.cancel().execute(sid)

    result = await asyncio.wait_for(running, 1)

    assert result.stop_reason is StopReason.CANCELLED
    history = stored(small, sid)
    assert history[-1].kind is MessageKind.COMMAND  # no marker, no answer
    _, turn, _ = small.uow.sessions.turns[-1]
    assert turn.stop_reason is StopReason.CANCELLED
    # The session takes the next prompt, uncompacted.
    small.llm.scripts = [answer("fourth answer", 1_000)]
    await small.prompt().execute(PromptRequest(session_id=sid, content=(TextBlock(text="go"),)))
    assert len(small.llm.requests[-1].messages) == 7


async def test_a_turn_cancelled_while_compacting_keeps_its_prompt_uncompacted(
    small: World,
) -> None:
    sid = await open_session(small)
    await two_turns(small, sid, last_context=5_200)
    asked = asyncio.Event()

    async def hang(_: ModelRequest) -> AsyncIterator:
        asked.set()
        await asyncio.Event().wait()
        yield TextChunk(text="unreachable")

    small.llm.scripts = [hang]
    running = asyncio.create_task(small.prompt().execute(ask(sid, "third question")))
    await asked.wait()
    small.cancel().execute(sid)

    result = await asyncio.wait_for(running, 1)

    assert result.stop_reason is StopReason.CANCELLED
    assert len(small.llm.requests) == 3  # the summary request only
    assert chat_texts(stored(small, sid))[-1] == ["third question"]
    assert all(m.is_chat for m in stored(small, sid))


async def test_an_overflow_in_the_middle_of_an_answer_is_not_retried(small: World) -> None:
    async def overflows_midway(_: ModelRequest) -> AsyncIterator:
        yield TextChunk(text="Half of")
        raise ContextOverflow()

    sid = await open_session(small)
    await two_turns(small, sid, last_context=1_500)
    small.llm.scripts = [overflows_midway]

    with pytest.raises(ModelRequestRejected) as raised:
        await small.prompt().execute(ask(sid, "third question"))

    assert not isinstance(raised.value, ContextOverflow)
    assert len(small.llm.requests) == 3  # no compaction, no retry
    last = stored(small, sid)[-1]
    assert last.interrupted and last.visible_text() == "Half of"


async def test_a_compaction_keeps_its_turns_across_a_load_after_a_cancelled_reply(
    small: World,
) -> None:
    # The second reply is cancelled while the model thinks: stored with its thinking only.
    # The compaction keeps from it (its long prompt is over the keep budget); the repair
    # on load drops it, and the kept turns must not go with it.
    small.policy = CompactionPolicy(compact_at=0.5, keep_turns=3)
    sid = await open_session(small)
    thought = asyncio.Event()

    async def thinks_then_hangs(_: ModelRequest) -> AsyncIterator:
        yield ThinkingChunk(text="Let me read the paste.")
        thought.set()
        await asyncio.Event().wait()

    small.llm.scripts = [answer("first answer", 1_000), thinks_then_hangs]
    await small.prompt().execute(ask(sid, "first question"))
    cancelled = asyncio.create_task(small.prompt().execute(ask(sid, "x" * 10_000)))
    await thought.wait()
    small.cancel().execute(sid)
    await cancelled
    small.llm.scripts = [
        answer("third answer", 5_200),
        summary(),
        answer("fourth answer", 2_000),
        answer("fifth answer", 2_500),
    ]
    await small.prompt().execute(ask(sid, "third question"))
    await small.prompt().execute(ask(sid, "fourth question"))  # compacted first
    live = chat_texts(small.llm.requests[-1].messages)
    await small.close().execute(sid)
    await small.load().execute(LoadSessionRequest(session_id=sid, cwd="/home/dev/p"))

    await small.prompt().execute(ask(sid, "fifth question"))

    assert live[1:] == [["third answer"], ["fourth question"]]
    # After the load the model must see what it saw before, and what followed.
    assert chat_texts(small.llm.requests[-1].messages)[:3] == live


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
