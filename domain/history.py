"""History rules: turn stored messages into a conversation the model provider accepts.

Providers reject histories with unanswered tool uses, two messages of the same role in a
row, thinking without its signature, or empty messages. Stored history can contain all of
those (cancelled turns, crashes), so the provider always gets this view, never the raw list.
"""

from collections.abc import Sequence
from dataclasses import replace

from domain.content import (
    ContentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    as_model_text,
)
from domain.ids import MessageId
from domain.message import Message, Role

INTERRUPTED_TOOL_RESULT = "The tool did not finish: it was interrupted before it returned."

# What one request may carry of a session's images; older ones go as their markers. Past 20
# images the provider refuses any image over 2000 px a side, and it refuses a request over
# 32 MB (images count as base64). The newest image always goes: it passed intake's cap.
MAX_IMAGES_PER_REQUEST = 20
MAX_IMAGE_BYTES_PER_REQUEST = 20 * 2**20


def _sendable(block: ContentBlock) -> bool:
    match block:
        case TextBlock(text=text):
            return bool(text.strip())
        case ThinkingBlock(signature=signature):
            return bool(signature)
        case _:
            return True


def _images_to_send(messages: Sequence[Message]) -> dict[int, set[int]]:
    """The images sent as images, by message index: the newest that fit in one request.
    The provider takes images in user messages only."""
    chosen: dict[int, set[int]] = {}
    count = total = 0
    for i in reversed(range(len(messages))):
        if messages[i].role is not Role.USER:
            continue
        for j, block in reversed(list(enumerate(messages[i].content))):
            if not (isinstance(block, ImageBlock) and block.data):
                continue
            total += len(block.data)
            if count and (count == MAX_IMAGES_PER_REQUEST or total > MAX_IMAGE_BYTES_PER_REQUEST):
                return chosen
            chosen.setdefault(i, set()).add(j)
            count += 1
    return chosen


def _clean(message: Message, images: set[int]) -> Message:
    """`images`: the indexes of the blocks sent as images (the others become markers)."""
    blocks = tuple(as_model_text(b, images=j in images) for j, b in enumerate(message.content))
    if message.interrupted:
        # A cut-short reply keeps only what the user saw as text.
        blocks = tuple(b for b in blocks if isinstance(b, TextBlock))
    return replace(message, content=tuple(b for b in blocks if _sendable(b)))


def _missing_results(
    uses: tuple[ToolUseBlock, ...], answered: set[str]
) -> tuple[ToolResultBlock, ...]:
    return tuple(
        ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED_TOOL_RESULT, is_error=True)
        for u in uses
        if u.id not in answered
    )


def _answer_tool_uses(messages: list[Message]) -> list[Message]:
    """Every tool_use gets a tool_result in the next message: missing ones are synthesised,
    into the next user message when there is one, else into a new message."""
    result: list[Message] = []
    pending: tuple[ToolUseBlock, ...] = ()
    for message in [*messages, None]:
        if pending:
            previous = result[-1]
            if message is not None and message.role is Role.USER:
                answered = {r.tool_use_id for r in message.tool_results}
                others = tuple(b for b in message.content if not isinstance(b, ToolResultBlock))
                # Results must lead the message that answers the tool uses.
                content = _missing_results(pending, answered) + message.tool_results + others
                if content != message.content:  # a sound message stays the same object
                    message = replace(message, content=content)
            else:
                result.append(
                    Message(
                        id=MessageId(f"{previous.id}-results"),
                        role=Role.USER,
                        content=_missing_results(pending, set()),
                        created_at=previous.created_at,
                    )
                )
        if message is None:
            break
        result.append(message)
        pending = message.tool_uses if message.role is Role.ASSISTANT else ()
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
            if len(kept) != len(message.content):
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


def provider_view(
    messages: tuple[Message, ...] | list[Message], *, images: bool = True
) -> list[Message]:
    """The conversation to send: cleaned, tool uses answered, strictly alternating roles.

    `images`: the model reads images (the newest that one request may carry, see
    MAX_IMAGES_PER_REQUEST); if not, each becomes its `[image: <mime>]` marker."""
    sent = _images_to_send(messages) if images else {}
    cleaned = [_clean(m, sent.get(i, set())) for i, m in enumerate(messages)]
    cleaned = [m for m in cleaned if m.content]
    view = _merge_same_role(_drop_orphan_results(_answer_tool_uses(cleaned)))
    while view and view[0].role is Role.ASSISTANT:
        view.pop(0)  # a conversation must open with the user
    if view and view[-1].role is Role.ASSISTANT and _ends_with_thinking_only(view[-1]):
        view.pop()
    return view


def _ends_with_thinking_only(message: Message) -> bool:
    return all(isinstance(b, ThinkingBlock | RedactedThinkingBlock) for b in message.content)


def repair(messages: tuple[Message, ...] | list[Message]) -> list[Message]:
    """The stored history made sound, keeping what the user sent and saw.

    Interrupted replies keep only their text; every tool_use gets a result (a synthetic
    error when the tool never finished); results without their tool_use and empty
    messages go. User prompts stay separate (replay shows them as sent); the provider
    view merges neighbours when the history is sent. Commands and context markers stay
    where they are: each run of conversation between them is repaired on its own.
    """
    repaired: list[Message] = []
    run: list[Message] = []
    for message in messages:
        if message.is_chat:
            run.append(message)
            continue
        repaired += _repair_chat(run)
        repaired.append(message)
        run = []
    return repaired + _repair_chat(run)


def _repair_chat(messages: list[Message]) -> list[Message]:
    kept = []
    for message in messages:
        if message.role is Role.ASSISTANT and message.interrupted:
            message = replace(
                message,
                content=tuple(
                    b for b in message.content if isinstance(b, TextBlock) and b.text.strip()
                ),
            )
        if message.content:
            kept.append(message)
    return _drop_orphan_results(_answer_tool_uses(kept))
