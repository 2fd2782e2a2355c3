"""When the OpenAI-compatible stream reports a tool call as started: once, as soon as both
its id and its name have come, and never for a call whose id the stream leaves out."""

from types import SimpleNamespace
from typing import Any

from adapters.llm.openai_replies import StreamedAnswer
from application.ports.llm import ToolUseStarted
from domain.content import ToolUseBlock


def chunk(*calls: dict[str, Any]) -> SimpleNamespace:
    deltas = [
        SimpleNamespace(
            index=c["index"],
            id=c.get("id"),
            function=SimpleNamespace(name=c.get("name"), arguments=c.get("arguments")),
        )
        for c in calls
    ]
    delta = SimpleNamespace(content=None, tool_calls=deltas, reasoning_content=None)
    return SimpleNamespace(usage=None, choices=[SimpleNamespace(finish_reason=None, delta=delta)])


def test_a_call_is_reported_once_when_its_id_and_name_have_come() -> None:
    answer = StreamedAnswer()
    assert answer.take(chunk({"index": 0, "id": "c1"})) == []  # no name yet
    assert answer.take(chunk({"index": 0, "name": "read_file", "arguments": '{"pa'})) == [
        ToolUseStarted(id="c1", name="read_file")
    ]
    assert answer.take(chunk({"index": 0, "arguments": 'th": "a"}'})) == []
    assert answer.response().content == (
        ToolUseBlock(id="c1", name="read_file", input={"path": "a"}),
    )


def test_a_call_without_an_id_is_not_reported_early() -> None:
    """Its id is made up when the stream ends: an early report would name another call."""
    answer = StreamedAnswer()
    started = answer.take(
        chunk({"index": 0, "name": "read_file", "arguments": "{}"}, {"index": 1, "id": "c2"})
    )
    started += answer.take(chunk({"index": 1, "name": "ls", "arguments": "{}"}))
    assert started == [ToolUseStarted(id="c2", name="ls")]
    assert [b.id for b in answer.response().content if isinstance(b, ToolUseBlock)] == [
        "call_0",
        "c2",
    ]
