"""The provider's own context overflow: compact once and retry, or end the turn and say why."""

from collections.abc import AsyncIterator

import pytest

from application.compaction.context_meter import CompactionPolicy
from application.errors import ContextOverflow, ModelRequestRejected
from application.ports.llm import ModelRequest, TextChunk
from domain.compaction import SUMMARY_SYSTEM
from domain.context import SUMMARY_HEADING
from domain.events import Notice, SessionNotice
from domain.message import MessageKind, Role
from domain.stop_reason import StopReason
from tests.unit.application.compaction.support import answer, chat_texts, stored, summary, two_turns
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


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
