"""Broken stored histories, each repaired into one a strict provider accepts."""

import itertools

import pytest

from domain.content import (
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.history import INTERRUPTED_TOOL_RESULT, provider_view, repair
from domain.message import Message, MessageKind, Role
from tests.factories import MessageFactory


def assert_strictly_valid(messages: list[Message]) -> None:
    assert messages, "empty conversation"
    assert messages[0].role is Role.USER
    for before, after in itertools.pairwise(messages):
        assert before.role is not after.role, "roles must alternate"
    for index, message in enumerate(messages):
        assert message.content, f"message {index} is empty"
        for block in message.content:
            if isinstance(block, TextBlock):
                assert block.text.strip(), f"blank text in message {index}"
            if isinstance(block, ThinkingBlock):
                assert block.signature, f"unsigned thinking in message {index}"
            assert not isinstance(block, ImageBlock), "attachments must be text by now"
        if message.role is Role.ASSISTANT and message.tool_uses:
            following = messages[index + 1] if index + 1 < len(messages) else None
            assert following is not None, "tool_use at the very end"
            ids = [b.tool_use_id for b in following.content if isinstance(b, ToolResultBlock)]
            assert set(ids) == {u.id for u in message.tool_uses}
            lead = following.content[: len(ids)]
            assert all(isinstance(b, ToolResultBlock) for b in lead), "results must come first"
        if message.role is Role.USER and message.tool_results:
            previous = messages[index - 1]
            assert {r.tool_use_id for r in message.tool_results} <= {
                u.id for u in previous.tool_uses
            }


def user(*blocks) -> Message:  # type: ignore[no-untyped-def]
    return MessageFactory(content=blocks or (TextBlock(text="question"),))


def reply(*blocks, interrupted: bool = False) -> Message:  # type: ignore[no-untyped-def]
    return MessageFactory(
        role=Role.ASSISTANT, interrupted=interrupted, content=blocks or (TextBlock(text="answer"),)
    )


def use(id_: str) -> ToolUseBlock:
    return ToolUseBlock(id=id_, name="bash", input={"command": "ls"})


def result(id_: str, text: str = "ok") -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=id_, content=text)


BROKEN = {
    "tool use at the end (crash while the tool ran)": [user(), reply(use("a"))],
    "tool use in the middle, next prompt without results": [
        user(),
        reply(TextBlock(text="let me"), use("a")),
        user(),
        reply(),
    ],
    "two tool uses, one answered": [user(), reply(use("a"), use("b")), user(result("a")), reply()],
    "results after the prompt text": [
        user(),
        reply(use("a")),
        user(TextBlock(text="p"), result("a")),
        reply(),
    ],
    "orphan result": [user(result("ghost"), TextBlock(text="hi")), reply()],
    "orphan-only user message": [user(), reply(), user(result("ghost")), reply()],
    "interrupted reply with unsigned thinking": [
        user(),
        reply(ThinkingBlock(thinking="hm"), TextBlock(text="half"), interrupted=True),
        user(),
    ],
    "interrupted reply with a tool use": [
        user(),
        reply(TextBlock(text="x"), use("a"), interrupted=True),
        user(result("a")),
    ],
    "interrupted reply with nothing shown": [
        user(),
        reply(ThinkingBlock(thinking="h"), interrupted=True),
        user(),
    ],
    "consecutive prompts (cancelled turns)": [user(), user(), user()],
    "consecutive replies": [user(), reply(), reply()],
    "starts with a reply": [reply(), user()],
    "blank text blocks": [user(TextBlock(text="  ")), user(), reply(TextBlock(text=""))],
    "attachments": [user(ImageBlock(mime_type="image/png"))],
    "nested crash: tool use then another tool use unanswered": [
        user(),
        reply(use("a")),
        reply(use("b")),
        user(),
    ],
}


@pytest.mark.parametrize("history", BROKEN.values(), ids=BROKEN.keys())
def test_repaired_history_is_accepted(history: list[Message]) -> None:
    repaired = repair(history)
    assert_strictly_valid(provider_view(repaired))
    assert repair(repaired) == repaired  # repair is idempotent: persisted once, done


def test_repair_answers_unfinished_tools_with_the_interrupted_result() -> None:
    repaired = repair([user(), reply(use("a"))])
    assert repaired[-1].role is Role.USER
    assert repaired[-1].content == (
        ToolResultBlock(tool_use_id="a", is_error=True, content=INTERRUPTED_TOOL_RESULT),
    )


def test_repair_puts_missing_results_into_the_next_prompt() -> None:
    prompt = user(TextBlock(text="next"))
    repaired = repair([user(), reply(use("a")), prompt])
    assert len(repaired) == 3
    assert repaired[2].id == prompt.id
    assert isinstance(repaired[2].content[0], ToolResultBlock)
    assert repaired[2].content[1] == TextBlock(text="next")


def test_repair_keeps_prompts_separate_and_what_the_user_saw() -> None:
    history = [
        user(TextBlock(text="one")),
        user(TextBlock(text="two")),
        reply(ThinkingBlock(thinking="t"), TextBlock(text="partial"), interrupted=True),
    ]
    repaired = repair(history)
    assert [m.visible_text() for m in repaired] == ["one", "two", "partial"]


def test_a_sound_history_needs_no_repair() -> None:
    history = [user(), reply(use("a")), user(result("a")), reply()]
    assert repair(history) == history


# Commands and context markers: kept in place, each run of chat between them repaired alone.


def marker(kind: MessageKind, role: Role = Role.ASSISTANT) -> Message:
    return MessageFactory(role=role, kind=kind, content=(TextBlock(text=kind.value),))


def test_markers_and_commands_stay_where_they_are() -> None:
    history = [
        user(),
        reply(),
        marker(MessageKind.COMMAND, Role.USER),
        marker(MessageKind.COMMAND_OUTPUT),
        user(),
        reply(use("a")),
        user(result("a")),
        reply(),
        marker(MessageKind.COMPACTION),
        user(),
        reply(),
        marker(MessageKind.CLEAR),
        user(),
    ]
    assert repair(history) == history


def test_missing_results_are_synthesised_before_the_marker_that_ends_their_run() -> None:
    prompt = user(TextBlock(text="after the clear"))
    clear = marker(MessageKind.CLEAR)
    history = [user(), reply(use("a")), clear, prompt, reply()]

    repaired = repair(history)

    assert [m.kind for m in repaired] == [
        MessageKind.CHAT,
        MessageKind.CHAT,
        MessageKind.CHAT,
        MessageKind.CLEAR,
        MessageKind.CHAT,
        MessageKind.CHAT,
    ]
    synthetic = repaired[2]
    assert synthetic.role is Role.USER
    assert synthetic.content == (
        ToolResultBlock(tool_use_id="a", is_error=True, content=INTERRUPTED_TOOL_RESULT),
    )
    assert repaired[3] is clear
    assert repaired[4] == prompt  # the prompt after the marker gets no results of the run before
    assert repair(repaired) == repaired


def test_a_command_between_a_tool_use_and_the_next_prompt_ends_the_run() -> None:
    command = marker(MessageKind.COMMAND, Role.USER)
    answer = marker(MessageKind.COMMAND_OUTPUT)
    prompt = user(TextBlock(text="next"))
    repaired = repair([user(), reply(use("a")), command, answer, prompt])
    assert repaired[2].tool_results == (
        ToolResultBlock(tool_use_id="a", is_error=True, content=INTERRUPTED_TOOL_RESULT),
    )
    assert repaired[3:] == [command, answer, prompt]


def test_results_do_not_reach_across_a_marker() -> None:
    # Results after a marker answer nothing in their own run: they go as orphans.
    history = [user(), reply(use("a")), marker(MessageKind.CLEAR), user(result("a")), reply()]
    repaired = repair(history)
    assert [m.kind for m in repaired] == [
        MessageKind.CHAT,
        MessageKind.CHAT,
        MessageKind.CHAT,
        MessageKind.CLEAR,
        MessageKind.CHAT,
    ]
    assert repaired[2].tool_results[0].content == INTERRUPTED_TOOL_RESULT
    assert repaired[4] == history[4]


def test_an_interrupted_reply_before_a_marker_keeps_its_text() -> None:
    cut = reply(ThinkingBlock(thinking="t"), TextBlock(text="half"), interrupted=True)
    compaction = marker(MessageKind.COMPACTION)
    repaired = repair([user(), cut, compaction, user()])
    assert repaired[1].content == (TextBlock(text="half"),)
    assert repaired[2] is compaction


@pytest.mark.parametrize("history", BROKEN.values(), ids=BROKEN.keys())
def test_a_command_anywhere_in_a_broken_history_stays_put(history: list[Message]) -> None:
    for at in range(len(history) + 1):
        command = marker(MessageKind.COMMAND, Role.USER)
        answer = marker(MessageKind.COMMAND_OUTPUT)
        repaired = repair([*history[:at], command, answer, *history[at:]])
        assert [m for m in repaired if not m.is_chat] == [command, answer]
        assert repaired.index(answer) == repaired.index(command) + 1
        assert repair(repaired) == repaired
        view = provider_view([m for m in repaired if m.is_chat])
        if view:
            assert_strictly_valid(view)


def test_a_sound_history_comes_back_as_the_same_messages() -> None:
    # A load compares the repair with the stored history: unchanged messages stay the very
    # same objects, so that comparison (done on every load) costs no deep walk.
    history = [
        user(),
        reply(TextBlock(text="reading"), use("t1"), use("t2")),
        user(result("t1"), result("t2"), TextBlock(text="and then?")),
        reply(),
    ]
    repaired = repair(history)
    assert all(a is b for a, b in zip(repaired, history, strict=True))


def test_a_repaired_message_is_a_new_one_and_its_neighbours_stay() -> None:
    history = [user(), reply(use("t1"), use("t2")), user(result("t2")), reply()]
    repaired = repair(history)
    assert repaired[0] is history[0] and repaired[3] is history[3]
    assert repaired[2] is not history[2]
    assert [r.tool_use_id for r in repaired[2].tool_results] == ["t1", "t2"]
    assert history[2].tool_results == (result("t2"),)  # the stored message is left as it was
