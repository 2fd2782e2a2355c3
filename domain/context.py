"""What the model sees of a stored history, and how large that is.

The stored history keeps everything the user saw: commands, `/clear` markers, compaction
markers. The model's context starts at the last boundary marker: after a `/clear` nothing
before it; after a compaction, the summary followed by the messages it kept verbatim.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from domain.content import (
    ContentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.history import provider_view
from domain.ids import MessageId
from domain.message import Message, MessageKind, Role

# Rough and deliberately high: code and JSON run at about 3.5 characters a token.
CHARS_PER_TOKEN = 3.5
IMAGE_TOKENS = 1_600  # the provider's cost of one image at its largest size
# One tool result as the model may see it. Tools cap their own output below this; the cap
# here also bounds results that came from elsewhere (imports, sub-agents).
MAX_TOOL_RESULT_CHARS = 40_000

SUMMARY_HEADING = (
    "This session was compacted. A summary of the earlier conversation, written for you "
    "to continue the work from:\n\n"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """The current context: an earlier summary (if compacted) and the chat messages after
    it, each with its index in the stored history."""

    summary: str | None
    chat: tuple[tuple[int, Message], ...]
    start: int  # the index after the boundary marker (0: none)
    marker: Message | None = None

    @property
    def messages(self) -> list[Message]:
        return [m for _, m in self.chat]

    def opening(self) -> list[Message]:
        """The summary as the message the model reads first (nothing if not compacted)."""
        if self.summary is None or self.marker is None:
            return []
        return [
            Message(
                id=self.marker.id,
                role=Role.USER,
                content=(TextBlock(text=SUMMARY_HEADING + self.summary),),
                created_at=self.marker.created_at,
            )
        ]


def current_context(history: Sequence[Message]) -> Context:
    start, marker = _last_boundary(history)
    if marker is None or marker.kind is MessageKind.CLEAR:
        return Context(summary=None, chat=_chat(history, start), start=start)
    compaction = marker.compaction
    kept_from: int | None = None
    if compaction is not None and compaction.keep_from is not None:
        kept_from = _index_of(history, compaction.keep_from, before=start)
    return Context(
        summary=marker.visible_text(),
        chat=_chat(history, start if kept_from is None else kept_from),
        start=start,
        marker=marker,
    )


def _last_boundary(history: Sequence[Message]) -> tuple[int, Message | None]:
    for index in range(len(history) - 1, -1, -1):
        if history[index].kind.is_boundary:
            return index + 1, history[index]
    return 0, None


def _index_of(history: Sequence[Message], message_id: MessageId, *, before: int) -> int | None:
    for index in range(before - 1, -1, -1):
        if history[index].id == message_id:
            return index
    return None


def _chat(history: Sequence[Message], start: int) -> tuple[tuple[int, Message], ...]:
    return tuple((i, history[i]) for i in range(start, len(history)) if history[i].is_chat)


def model_view(history: Sequence[Message], *, images: bool = True) -> list[Message]:
    """The conversation the next request carries: the current context, repaired into the
    provider's rules, with over-long tool results cut to their head."""
    context = current_context(history)
    messages = context.opening() + context.messages
    return provider_view([_capped(_briefed(m)) for m in messages], images=images)


def _briefed(message: Message) -> Message:
    if message.context is None:
        return message
    return replace(message, content=message.model_content(), context=None)


def _capped(message: Message) -> Message:
    if not any(
        isinstance(b, ToolResultBlock) and len(b.content) > MAX_TOOL_RESULT_CHARS
        for b in message.content
    ):
        return message
    return replace(message, content=tuple(_cap(b) for b in message.content))


def _cap(block: ContentBlock) -> ContentBlock:
    if not isinstance(block, ToolResultBlock) or len(block.content) <= MAX_TOOL_RESULT_CHARS:
        return block
    cut = len(block.content) - MAX_TOOL_RESULT_CHARS
    text = f"{block.content[:MAX_TOOL_RESULT_CHARS]}\n… [{cut:,} more characters not shown]"
    return replace(block, content=text)


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A conservative token count for messages the provider has not counted yet."""
    chars = images = 0
    for message in messages:
        for block in message.model_content():
            match block:
                case TextBlock(text=text):
                    chars += len(text)
                case ThinkingBlock(thinking=thinking):
                    chars += len(thinking)
                case ToolUseBlock(name=name, input=tool_input):
                    chars += len(name) + len(json.dumps(tool_input, default=str))
                case ToolResultBlock(content=content):
                    chars += min(len(content), MAX_TOOL_RESULT_CHARS)
                case ImageBlock():
                    images += 1
                case _:
                    chars += 100  # markers for what the model gets as text
        chars += 20  # the message's own framing
    return int(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS


def context_estimate(history: Sequence[Message], *, overhead: int) -> int:
    """Tokens the next request will carry: the provider's own count of the last reply in
    the current context, plus an estimate of what was added since. With no counted reply
    (a new or freshly compacted context), an estimate of all of it, plus `overhead` for
    the system prompt and tool definitions."""
    context = current_context(history)
    chat = context.chat
    for position in range(len(chat) - 1, -1, -1):
        index, message = chat[position]
        if index < context.start:
            break  # kept from before a compaction: counted in a larger context
        if message.context_tokens is not None:
            return message.context_tokens + estimate_tokens([m for _, m in chat[position + 1 :]])
    return overhead + estimate_tokens(context.opening() + context.messages)


def split_for_compaction(chat: Sequence[Message], *, keep_turns: int, keep_budget: int) -> int:
    """Where the verbatim part of a compacted context starts: the first message of the
    last `keep_turns` user turns, moved later while that part is over `keep_budget` tokens
    (or it could never fit). Never between a tool use and its result. 0: nothing to
    summarise."""
    points = [i for i, m in enumerate(chat) if _may_start_context(m)]
    prompts = [i for i in points if chat[i].role is Role.USER]
    split = prompts[-keep_turns] if keep_turns and len(prompts) >= keep_turns else len(chat)
    if keep_turns and len(prompts) < keep_turns:
        split = 0
    sizes = _suffix_sizes(chat)
    if sizes[split] > keep_budget:
        later = [i for i in points if i > split]
        fitting = [i for i in later if sizes[i] <= keep_budget]
        split = fitting[0] if fitting else (later[-1] if later else split)
    return split


def _may_start_context(message: Message) -> bool:
    """A kept part may start with a prompt or a reply, never with tool results (they belong
    to the tool uses before them), nor with a reply cut short: a load's repair may drop it
    (a cut reply with no text), and the kept part must be found by its first message."""
    if message.role is Role.ASSISTANT:
        return not message.interrupted
    return not message.tool_results


def _suffix_sizes(chat: Sequence[Message]) -> list[int]:
    sizes = [0] * (len(chat) + 1)
    for index in range(len(chat) - 1, -1, -1):
        sizes[index] = sizes[index + 1] + estimate_tokens([chat[index]])
    return sizes
