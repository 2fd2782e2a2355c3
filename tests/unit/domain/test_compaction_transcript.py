"""The text a summary request carries: a plain transcript, then the instruction."""

import json

from domain.compaction import INPUT_CHARS, OMITTED, RESULT_CHARS, instruction, transcript
from domain.content import (
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.message import Message, Role
from tests.factories import MessageFactory

LIMIT = 1_000_000


def user(*blocks: object) -> Message:
    return MessageFactory(role=Role.USER, content=blocks)  # type: ignore[no-any-return]


def assistant(*blocks: object) -> Message:
    return MessageFactory(role=Role.ASSISTANT, content=blocks)  # type: ignore[no-any-return]


def test_each_message_is_rendered_under_its_speaker() -> None:
    text = transcript(
        None,
        [user(TextBlock(text="Fix the build")), assistant(TextBlock(text="Fixed it."))],
        limit_chars=LIMIT,
    )
    assert text == "User:\nFix the build\n\nAssistant:\nFixed it."


def test_tool_calls_and_results_are_rendered_and_thinking_is_left_out() -> None:
    text = transcript(
        None,
        [
            user(TextBlock(text="What is in a.py?")),
            assistant(
                ThinkingBlock(thinking="secret reasoning", signature="s"),
                RedactedThinkingBlock(data="opaque"),
                TextBlock(text="Let me look."),
                ToolUseBlock(id="t1", name="read_file", input={"path": "a.py"}),
            ),
            user(
                ToolResultBlock(tool_use_id="t1", content="print('a')"),
                ToolResultBlock(tool_use_id="t2", content="No such file", is_error=True),
            ),
        ],
        limit_chars=LIMIT,
    )
    assert "secret reasoning" not in text and "opaque" not in text
    assert "Assistant:\nLet me look.\n[tool call read_file " + json.dumps({"path": "a.py"}) in text
    assert "User:\n[tool result: print('a')]\n[tool error: No such file]" in text


def test_long_tool_inputs_and_results_are_shortened() -> None:
    long_input = {"content": "i" * (INPUT_CHARS * 3)}
    long_result = "r" * (RESULT_CHARS + 777)
    text = transcript(
        None,
        [
            assistant(ToolUseBlock(id="t1", name="write_file", input=long_input)),
            user(ToolResultBlock(tool_use_id="t1", content=long_result)),
        ],
        limit_chars=LIMIT,
    )
    assert "r" * RESULT_CHARS + " … [777 more characters]" in text
    assert "r" * (RESULT_CHARS + 1) not in text
    rendered_input = json.dumps(long_input)
    cut = len(rendered_input) - INPUT_CHARS
    assert rendered_input[:INPUT_CHARS] + f" … [{cut:,} more characters]" in text
    assert rendered_input not in text


def test_attachments_appear_as_their_markers_and_empty_messages_not_at_all() -> None:
    text = transcript(
        None,
        [
            user(TextBlock(text="What is this?"), ImageBlock(mime_type="image/png", data="AAAA")),
            assistant(ThinkingBlock(thinking="only thinking")),
            assistant(TextBlock(text="   ")),
            assistant(TextBlock(text="A cat.")),
        ],
        limit_chars=LIMIT,
    )
    assert text == "User:\nWhat is this?\n[image: image/png]\n\nAssistant:\nA cat."


def test_an_earlier_summary_comes_first() -> None:
    text = transcript(
        "They chose SQLite.", [user(TextBlock(text="Now add a migration"))], limit_chars=LIMIT
    )
    assert text == (
        "Summary of the conversation before this part:\nThey chose SQLite.\n\n"
        "User:\nNow add a migration"
    )


def test_the_newest_messages_are_kept_when_all_would_not_fit() -> None:
    messages = [user(TextBlock(text=f"message {n} " + "x" * 80)) for n in range(10)]
    whole = transcript(None, messages, limit_chars=LIMIT)
    limit = len(whole) // 2

    text = transcript(None, messages, limit_chars=limit)

    assert text.startswith(OMITTED + "\n\n")
    assert "message 9 " in text and "message 0 " not in text
    kept = text.removeprefix(OMITTED + "\n\n")
    assert whole.endswith(kept)  # a tail of whole messages, in order
    assert kept.startswith("User:\n")
    assert len(kept) <= limit


def test_when_cut_the_earlier_summary_still_comes_first() -> None:
    messages = [user(TextBlock(text=f"message {n} " + "x" * 80)) for n in range(10)]
    summary = "s" * 200
    text = transcript(summary, messages, limit_chars=700)
    head = f"Summary of the conversation before this part:\n{summary}"
    assert text.startswith(head + "\n\n" + OMITTED + "\n\n")
    assert text.endswith("message 9 " + "x" * 80)


def test_the_instruction_names_the_focus_only_when_given() -> None:
    assert "focus" not in instruction(None)
    assert instruction("") == instruction(None)
    focused = instruction("the database migration")
    assert focused.startswith(instruction(None))
    assert focused.endswith("focus on: the database migration")
