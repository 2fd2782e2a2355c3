"""Which waiting updates may become one, and what the one says."""

import pytest

from adapters.acp_v1.coalesce import MAX_MERGED_CHARS, merged
from tests.support.updates import text_chunk, tool_update


def text_of(message) -> str:
    return message["params"]["update"]["content"]["text"]


def test_chunks_of_one_message_join_in_order():
    first, second = text_chunk("Hel"), text_chunk("lo")

    both = merged(first, second)

    assert both is not None
    assert text_of(both) == "Hello"
    assert both["params"]["update"]["messageId"] == "m1"
    assert (text_of(first), text_of(second)) == ("Hel", "lo")  # the inputs are left alone


def test_thoughts_join_like_text():
    both = merged(
        text_chunk("a", kind="agent_thought_chunk"), text_chunk("b", kind="agent_thought_chunk")
    )

    assert both is not None
    assert both["params"]["update"]["sessionUpdate"] == "agent_thought_chunk"
    assert text_of(both) == "ab"


@pytest.mark.parametrize(
    "later",
    [
        text_chunk("x", message="m2"),
        text_chunk("x", session="s2"),
        text_chunk("x", kind="agent_thought_chunk"),
        text_chunk("x", kind="user_message_chunk"),
        tool_update(),
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "session/update",
            "params": text_chunk("x")["params"],
        },
    ],
)
def test_what_is_not_the_same_message_stays_apart(later):
    assert merged(text_chunk("a"), later) is None


def test_a_chunk_with_more_than_text_is_not_joined():
    annotated = text_chunk("b")
    annotated["params"]["update"]["content"]["annotations"] = {"priority": 1}
    with_meta = text_chunk("c")
    with_meta["params"]["update"]["_meta"] = {"x": 1}

    assert merged(text_chunk("a"), annotated) is None
    assert merged(text_chunk("a"), with_meta) is None


def test_a_merged_chunk_stops_growing_at_the_cap():
    full = text_chunk("x" * (MAX_MERGED_CHARS - 1))

    assert merged(full, text_chunk("y")) is not None
    assert merged(full, text_chunk("yz")) is None


def test_updates_of_one_tool_call_fold_later_fields_over_earlier():
    first = tool_update(status="in_progress", content=[{"type": "content", "content": {}}])
    second = tool_update(content=[{"type": "content", "content": {"type": "text", "text": "x"}}])

    both = merged(first, second)

    assert both is not None
    assert both["params"]["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "in_progress",
        "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
    }


def test_updates_of_different_tool_calls_stay_apart():
    assert merged(tool_update("t1", status="completed"), tool_update("t2", status="failed")) is None


def test_updates_of_one_tool_call_with_different_statuses_stay_apart():
    """The client shows each status (in_progress between pending and completed)."""
    assert merged(tool_update(status="in_progress"), tool_update(status="completed")) is None
    assert merged(tool_update(status="pending"), tool_update(status="in_progress")) is None


def test_a_status_joins_updates_that_say_nothing_else_of_it():
    progress = tool_update(content=[{"type": "content", "content": {}}])
    same = merged(tool_update(status="in_progress"), tool_update(status="in_progress"))

    assert same is not None and same["params"]["update"]["status"] == "in_progress"
    done = merged(progress, tool_update(status="completed"))
    assert done is not None and done["params"]["update"]["status"] == "completed"


def summary_chunk(text: str, compaction: str = "c1") -> dict:
    update = {
        "compactionId": compaction,
        "content": {"text": text, "type": "text"},
        "sessionUpdate": "compaction_summary_chunk",
    }
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }


def test_chunks_of_one_compaction_summary_join_like_text():
    both = merged(summary_chunk("SUMMARY: "), summary_chunk("they counted."))

    assert both is not None
    assert both["params"]["update"]["compactionId"] == "c1"
    assert text_of(both) == "SUMMARY: they counted."
    assert merged(summary_chunk("a"), summary_chunk("b", compaction="c2")) is None
    assert merged(text_chunk("a"), summary_chunk("b")) is None
