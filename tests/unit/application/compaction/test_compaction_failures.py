"""A summary request that fails: go on uncompacted while there is room, else lose nothing."""

from application.errors import ModelUnavailable
from application.ports.llm import ModelResponse
from domain.compaction import SUMMARY_SYSTEM
from domain.content import ToolUseBlock
from domain.events import Notice
from domain.stop_reason import ModelStop, StopReason
from domain.usage import Usage
from tests.unit.application.compaction.support import answer, chat_texts, stored, summary, two_turns
from tests.unit.application.test_prompt import ask, open_session
from tests.unit.application.world import World


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
