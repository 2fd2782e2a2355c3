"""Content blocks: what users send, what the model produces, and how one becomes the other.

User blocks are stored as sent (so history replays faithfully); the model sees them
through `as_model_text`, which degrades what the model cannot take to text markers
(images too, for a model that cannot read them or an image stored without its data).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TypeVar

from domain.text import valid_data


@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock:
    thinking: str
    # The provider only accepts thinking back with the signature it issued.
    signature: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RedactedThinkingBlock:
    data: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseBlock:
    id: str
    name: str
    input: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageBlock:
    mime_type: str
    uri: str | None = None
    # Base64, checked at intake (domain.images). None in rows stored before images were sent.
    data: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioBlock:
    mime_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceLinkBlock:
    uri: str
    name: str
    title: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddedResourceBlock:
    uri: str
    text: str | None = None
    mime_type: str | None = None
    # Binary resources are not sent to the model; we keep only that one was attached.
    is_binary: bool = False


UserInputBlock = (
    TextBlock
    | ImageBlock
    | AudioBlock
    | ResourceLinkBlock
    | EmbeddedResourceBlock
    | ToolResultBlock
)
AssistantBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock
ContentBlock = UserInputBlock | AssistantBlock


def as_model_text(block: ContentBlock, *, images: bool = False) -> ContentBlock:
    """The block as the model receives it: user attachments become plain text, except an
    image with its data when `images` (the model reads images)."""
    match block:
        case ImageBlock(data=str()) if images:
            return block
        case ImageBlock(mime_type=mime):
            return TextBlock(text=f"[image: {mime}]")
        case AudioBlock(mime_type=mime):
            return TextBlock(text=f"[audio: {mime}]")
        case ResourceLinkBlock(uri=uri, name=name, title=title):
            label = f"{name} ({title})" if title and title != name else name
            return TextBlock(text=f"[resource link: {label} <{uri}>]")
        case EmbeddedResourceBlock(uri=uri, is_binary=True, mime_type=mime):
            return TextBlock(text=f"[binary resource: {uri} ({mime or 'unknown type'})]")
        case EmbeddedResourceBlock(uri=uri, text=text):
            return TextBlock(text=f'<resource uri="{uri}">\n{text or ""}\n</resource>')
        case _:
            return block


def plain_text(blocks: tuple[ContentBlock, ...]) -> str:
    """The text a person would read in these blocks, attachments as their markers."""
    parts = []
    for block in blocks:
        shown = as_model_text(block)
        if isinstance(shown, TextBlock):
            parts.append(shown.text)
    return "\n".join(parts)


B = TypeVar("B", bound=ContentBlock)


def valid_block(block: B) -> B:
    """The block with every text repaired (see domain.text); the same block if it was valid."""
    changes = {}
    for f in fields(block):
        value = getattr(block, f.name)
        repaired = valid_data(value)
        if repaired is not value:
            changes[f.name] = repaired
    return replace(block, **changes) if changes else block
