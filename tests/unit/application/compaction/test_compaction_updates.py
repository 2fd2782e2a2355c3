"""What the client is shown of a compaction, live and on a load."""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

from application.errors import ModelUnavailable
from application.ports.llm import ModelRequest, ModelResponse, TextChunk
from application.sessions.load_session import LoadSessionRequest
from domain.content import TextBlock
from domain.events import (
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    TextDelta,
)
from domain.message import MessageKind
from domain.stop_reason import ModelStop, StopReason
from domain.usage import Usage
from tests.unit.application.compaction.support import (
    WINDOW,
    answer,
    stored,
    summary,
    two_turns,
)
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


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
