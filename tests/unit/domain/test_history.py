from domain.content import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.history import INTERRUPTED_TOOL_RESULT, provider_view
from domain.message import Role
from tests.factories import MessageFactory


def roles(messages) -> list[Role]:  # type: ignore[no-untyped-def]
    return [m.role for m in messages]


def test_a_clean_history_is_unchanged() -> None:
    history = [MessageFactory(), MessageFactory(reply=True)]
    assert provider_view(history) == history


def test_consecutive_user_prompts_are_merged() -> None:
    # A cancelled turn before any reply leaves two user messages in a row.
    first = MessageFactory(content=(TextBlock(text="one"),))
    second = MessageFactory(content=(TextBlock(text="two"),))
    view = provider_view([first, second])
    assert len(view) == 1
    assert view[0].content == (TextBlock(text="one"), TextBlock(text="two"))


def test_unanswered_tool_use_gets_a_synthetic_error_result_anywhere() -> None:
    history = [
        MessageFactory(),
        MessageFactory(asking_tool=True),
        MessageFactory(content=(TextBlock(text="next question"),)),
        MessageFactory(reply=True),
    ]
    view = provider_view(history)
    assert roles(view) == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    results = view[2].content
    assert results[0] == ToolResultBlock(
        tool_use_id="toolu_1", content=INTERRUPTED_TOOL_RESULT, is_error=True
    )
    assert results[1] == TextBlock(text="next question")


def test_answered_tool_use_is_kept_as_is() -> None:
    history = [
        MessageFactory(),
        MessageFactory(asking_tool=True),
        MessageFactory(tool_answer=True),
        MessageFactory(reply=True),
    ]
    assert provider_view(history) == history


def test_orphan_tool_results_are_dropped() -> None:
    orphan = MessageFactory(
        content=(ToolResultBlock(tool_use_id="nope", content="x"), TextBlock(text="hello"))
    )
    view = provider_view([orphan])
    assert view[0].content == (TextBlock(text="hello"),)


def test_interrupted_reply_keeps_only_the_text_the_user_saw() -> None:
    partial = MessageFactory(
        role=Role.ASSISTANT,
        interrupted=True,
        content=(ThinkingBlock(thinking="hmm"), TextBlock(text="Half an ans")),
    )
    view = provider_view([MessageFactory(), partial, MessageFactory()])
    assert view[1].content == (TextBlock(text="Half an ans"),)


def test_unsigned_thinking_and_blank_text_are_not_sent() -> None:
    reply = MessageFactory(
        role=Role.ASSISTANT,
        content=(
            ThinkingBlock(thinking="no signature"),
            TextBlock(text="  "),
            TextBlock(text="ok"),
        ),
    )
    view = provider_view([MessageFactory(), reply])
    assert view[1].content == (TextBlock(text="ok"),)


def test_signed_thinking_is_sent_back() -> None:
    reply = MessageFactory(
        role=Role.ASSISTANT,
        content=(ThinkingBlock(thinking="t", signature="sig"), TextBlock(text="ok")),
    )
    assert provider_view([MessageFactory(), reply])[1] == reply


def test_conversation_opens_with_the_user() -> None:
    view = provider_view([MessageFactory(reply=True), MessageFactory()])
    assert roles(view) == [Role.USER]


def test_attachments_reach_the_model_as_text() -> None:
    from domain.content import ImageBlock

    view = provider_view([MessageFactory(content=(ImageBlock(mime_type="image/png"),))])
    assert view[0].content == (TextBlock(text="[image: image/png]"),)


def test_tool_use_without_any_following_message_is_answered() -> None:
    view = provider_view([MessageFactory(), MessageFactory(asking_tool=True)])
    assert roles(view) == [Role.USER, Role.ASSISTANT, Role.USER]
    assert isinstance(view[2].content[0], ToolResultBlock)
    assert isinstance(view[1].content[1], ToolUseBlock)
