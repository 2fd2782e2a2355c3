"""What the agent tells the client while it works. Transports map these to their wire format."""

from dataclasses import dataclass

from domain.content import ContentBlock
from domain.ids import MessageId


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """Agent text that is not model output, e.g. why the provider failed."""

    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UserContentReplayed:
    message_id: MessageId
    block: ContentBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionTitleChanged:
    title: str


AgentEvent = TextDelta | ThinkingDelta | Notice | UserContentReplayed | SessionTitleChanged
