from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from domain.content import ContentBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class MessageKind(StrEnum):
    """What a stored message is. Only CHAT messages are conversation the model reads; the
    others are kept so that a load replays the session as the user saw it."""

    CHAT = "chat"
    COMMAND = "command"  # a slash command as the user typed it (user)
    COMMAND_OUTPUT = "command_output"  # what the command answered (assistant)
    CLEAR = "clear"  # /clear: the model sees nothing before this marker (assistant)
    COMPACTION = "compaction"  # a summary standing for what came before (assistant)

    @property
    def is_boundary(self) -> bool:
        """The model's context starts again at this marker."""
        return self in (MessageKind.CLEAR, MessageKind.COMPACTION)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """A COMPACTION marker's facts: its text is the summary of everything before
    `keep_from` (the first message kept verbatim; None: nothing kept)."""

    keep_from: MessageId | None
    tokens_before: int
    tokens_after: int
    focus: str | None = None
    # The model's context window when it was compacted (None: stored before it was kept):
    # what the counts were measured against, replayed beside them.
    window: int | None = None


def compacted_notice(tokens_before: int, tokens_after: int) -> str:
    """How a compaction is told in the chat (to a client that shows no compactions): its
    own paragraph, live and on load."""
    return f"\n\nContext compacted: {tokens_before} → {tokens_after} tokens\n\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    id: MessageId
    role: Role
    content: tuple[ContentBlock, ...]
    created_at: datetime
    # True for an assistant message cut short (cancel, provider failure): kept as what the user saw.
    interrupted: bool = False
    kind: MessageKind = MessageKind.CHAT
    # An assistant reply's request as the provider counted it (input, cache and output
    # tokens): where the next request's size estimate starts.
    context_tokens: int | None = None
    compaction: Compaction | None = None  # for COMPACTION markers
    # What the user typed when the model was sent something else in its place (a prompt
    # command's expansion, e.g. an MCP prompt's text): a load replays the user's own words.
    typed: str | None = None
    # What the agent told the model with this prompt (its environment): the model reads it
    # before the user's words; the user never sees it. Stored, so requests stay the same.
    context: str | None = None

    def model_content(self) -> tuple[ContentBlock, ...]:
        """The content as the model reads it: the context first."""
        if self.context is None:
            return self.content
        return (TextBlock(text=self.context), *self.content)

    def shown_content(self) -> tuple[ContentBlock, ...]:
        """The content as the user saw it: the typed words in place of the first text."""
        if self.typed is None:
            return self.content
        for index, block in enumerate(self.content):
            if isinstance(block, TextBlock):
                typed = TextBlock(text=self.typed)
                return (*self.content[:index], typed, *self.content[index + 1 :])
        return (TextBlock(text=self.typed), *self.content)

    @property
    def is_chat(self) -> bool:
        return self.kind is MessageKind.CHAT

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))

    @property
    def is_tool_results_only(self) -> bool:
        return bool(self.content) and all(isinstance(b, ToolResultBlock) for b in self.content)

    def visible_text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def thinking_text(self) -> str:
        return "".join(b.thinking for b in self.content if isinstance(b, ThinkingBlock))
