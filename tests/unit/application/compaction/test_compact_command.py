"""/compact, and compaction when a turn is cancelled."""

import asyncio
from collections.abc import AsyncIterator

from application.compaction.context_meter import CompactionPolicy
from application.errors import ModelUnavailable
from application.ports.llm import ModelRequest, TextChunk, ThinkingChunk
from application.sessions.load_session import LoadSessionRequest
from application.turn.prompt import PromptRequest
from domain.compaction import SUMMARY_SYSTEM, instruction
from domain.content import TextBlock
from domain.context import SUMMARY_HEADING
from domain.events import (
    CompactionChanged,
    CompactionSummaryDelta,
    Notice,
    UsageUpdated,
)
from domain.message import MessageKind, Role
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.unit.application.compaction.support import (
    answer,
    chat_texts,
    stored,
    summary,
    two_turns,
)
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


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
