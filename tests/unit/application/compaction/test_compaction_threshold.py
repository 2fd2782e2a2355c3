"""Compaction before a request: past the threshold, or without room for the answer."""

from dataclasses import replace

import pytest

from application.compaction.compactor import SUMMARY_MAX_TOKENS
from application.compaction.context_meter import CompactionPolicy
from domain.compaction import SUMMARY_SYSTEM, instruction
from domain.context import SUMMARY_HEADING, context_estimate, estimate_tokens
from domain.events import (
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    TextDelta,
    UsageUpdated,
)
from domain.message import MessageKind, Role
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.unit.application.compaction.support import (
    PRICES,
    SMALL,
    WINDOW,
    answer,
    chat_texts,
    overhead,
    stored,
    summary,
    two_turns,
)
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


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
