from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from domain.content import ContentBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    id: MessageId
    role: Role
    content: tuple[ContentBlock, ...]
    created_at: datetime
    # True for an assistant message cut short (cancel, provider failure): kept as what the user saw.
    interrupted: bool = False

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
