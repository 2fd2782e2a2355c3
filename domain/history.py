"""History rules: turn stored messages into a conversation the model provider accepts.

Providers reject histories with unanswered tool uses, two messages of the same role in a
row, thinking without its signature, or empty messages. Stored history can contain all of
those (cancelled turns, crashes), so the provider always gets this view, never the raw list.
"""

from dataclasses import replace

from domain.content import (
    ContentBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    as_model_text,
)
from domain.message import Message, Role

INTERRUPTED_TOOL_RESULT = "The tool did not finish: it was interrupted before it returned."


def _sendable(block: ContentBlock) -> bool:
    match block:
        case TextBlock(text=text):
            return bool(text.strip())
        case ThinkingBlock(signature=signature):
            return bool(signature)
        case _:
            return True


def _clean(message: Message) -> Message:
    blocks = tuple(as_model_text(b) for b in message.content)
    if message.interrupted:
        # A cut-short reply keeps only what the user saw as text.
        blocks = tuple(b for b in blocks if isinstance(b, TextBlock))
    return replace(message, content=tuple(b for b in blocks if _sendable(b)))


def _answer_tool_uses(messages: list[Message]) -> list[Message]:
    """Give every tool_use a tool_result in the next user message, synthesising missing ones."""
    result: list[Message] = []
    for index, message in enumerate(messages):
        result.append(message)
        uses = message.tool_uses if message.role is Role.ASSISTANT else ()
        if not uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = (
            {r.tool_use_id for r in following.tool_results}
            if following is not None and following.role is Role.USER
            else set()
        )
        missing = tuple(
            ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED_TOOL_RESULT, is_error=True)
            for u in uses
            if u.id not in answered
        )
        if missing:
            result.append(
                Message(
                    id=message.id, role=Role.USER, content=missing, created_at=message.created_at
                )
            )
    return result


def _drop_orphan_results(messages: list[Message]) -> list[Message]:
    """Remove tool_results whose tool_use is not in the message right before."""
    result: list[Message] = []
    for message in messages:
        if message.role is Role.USER and message.tool_results:
            previous = result[-1] if result else None
            known = (
                {u.id for u in previous.tool_uses}
                if previous is not None and previous.role is Role.ASSISTANT
                else set()
            )
            kept = tuple(
                b
                for b in message.content
                if not isinstance(b, ToolResultBlock) or b.tool_use_id in known
            )
            message = replace(message, content=kept)
        if message.content:
            result.append(message)
    return result


def _merge_same_role(messages: list[Message]) -> list[Message]:
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1].role is message.role:
            previous = merged[-1]
            # Tool results must lead a user message, so they go first when merging.
            content = previous.content + message.content
            if message.role is Role.USER:
                content = tuple(b for b in content if isinstance(b, ToolResultBlock)) + tuple(
                    b for b in content if not isinstance(b, ToolResultBlock)
                )
            merged[-1] = replace(previous, content=content)
        else:
            merged.append(message)
    return merged


def provider_view(messages: tuple[Message, ...] | list[Message]) -> list[Message]:
    """The conversation to send: cleaned, tool uses answered, strictly alternating roles."""
    cleaned = [m for m in (_clean(m) for m in messages) if m.content]
    view = _merge_same_role(_drop_orphan_results(_answer_tool_uses(cleaned)))
    while view and view[0].role is Role.ASSISTANT:
        view.pop(0)  # a conversation must open with the user
    if view and view[-1].role is Role.ASSISTANT and _ends_with_thinking_only(view[-1]):
        view.pop()
    return view


def _ends_with_thinking_only(message: Message) -> bool:
    return all(isinstance(b, ThinkingBlock | RedactedThinkingBlock) for b in message.content)
