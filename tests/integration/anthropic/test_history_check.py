"""The scripted server's history check: passes what the adapter sends, fails what the API does."""

import pytest

from adapters.llm.anthropic import messages_to_api
from domain.content import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.message import Role
from tests.integration.anthropic.support import message
from tests.support.scripted_anthropic import assert_valid_history

pytestmark = pytest.mark.integration


def test_the_api_shapes_of_the_adapter_pass_the_history_check() -> None:
    conversation = [
        message(Role.USER, TextBlock(text="hi")),
        message(
            Role.ASSISTANT,
            ThinkingBlock(thinking="t", signature="s"),
            ToolUseBlock(id="a", name="x"),
            ToolUseBlock(id="b", name="y"),
        ),
        message(
            Role.USER,
            ToolResultBlock(tool_use_id="b", content="2"),
            ToolResultBlock(tool_use_id="a", content="1", is_error=True),
            TextBlock(text="and then?"),
        ),
    ]
    assert_valid_history(messages_to_api(conversation))


def _user(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks: dict) -> dict:
    return {"role": "assistant", "content": list(blocks)}


_TEXT = {"type": "text", "text": "hi"}
_USE = {"type": "tool_use", "id": "t1", "name": "run", "input": {}}
_RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "complaint"),
    [
        ([], "empty conversation"),
        ([_assistant(_TEXT)], r"messages\[0\]: the conversation must start with a user"),
        ([_user(_TEXT), _user(_TEXT)], r"messages\[1\]: two user messages in a row"),
        ([_user()], r"messages\[0\]\.content: empty content list"),
        ([_user({"type": "text", "text": " "})], r"messages\[0\]\.content\[0\]: text block"),
        (
            [_user(_TEXT), _assistant({"type": "thinking", "thinking": "x", "signature": ""})],
            r"messages\[1\]\.content\[0\]: thinking block without a signature",
        ),
        (
            [_user(_TEXT), _assistant(_USE), _user(_TEXT)],
            r"messages\[2\]: tool_use id\(s\) \['t1'\] from messages\[1\] have no tool_result",
        ),
        (
            [_user(_TEXT), _assistant(_USE), _user(_TEXT, _RESULT)],
            r"messages\[2\]\.content\[0\]: tool_result blocks must come before",
        ),
        ([_user(_RESULT)], r"messages\[0\]\.content\[0\]: tool_result for 't1' does not answer"),
        ([_user(_TEXT), _assistant(_USE)], r"messages\[1\]: tool_use id\(s\) \['t1'\] are never"),
        (
            [_user(_TEXT), _assistant(_TEXT), _user(_RESULT)],
            r"messages\[2\]\.content\[0\]: tool_result for 't1'",
        ),
    ],
)
def test_history_check_rejects_what_the_provider_rejects(messages: list, complaint: str) -> None:
    with pytest.raises(AssertionError, match=complaint):
        assert_valid_history(messages)
