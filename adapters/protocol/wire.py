"""Domain objects to ACP wire models (acp.schema) and back. No schema is written here."""

from typing import Any

from acp import schema as acp

from application.dto import SessionState
from domain.content import (
    AudioBlock,
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    UserInputBlock,
    as_model_text,
)
from domain.events import (
    AgentEvent,
    Notice,
    SessionTitleChanged,
    TextDelta,
    ThinkingDelta,
    UserContentReplayed,
)
from domain.usage import Usage

AcpPromptBlock = (
    acp.TextContentBlock
    | acp.ImageContentBlock
    | acp.AudioContentBlock
    | acp.ResourceContentBlock
    | acp.EmbeddedResourceContentBlock
)


def dump(model: acp.BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def block_from_acp(block: AcpPromptBlock) -> UserInputBlock:
    match block:
        case acp.TextContentBlock(text=text):
            return TextBlock(text=text)
        case acp.ImageContentBlock(mime_type=mime, uri=uri):
            return ImageBlock(mime_type=mime, uri=uri)
        case acp.AudioContentBlock(mime_type=mime):
            return AudioBlock(mime_type=mime)
        case acp.ResourceContentBlock(uri=uri, name=name, title=title, mime_type=mime):
            return ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime)
        case acp.EmbeddedResourceContentBlock(resource=acp.TextResourceContents() as res):
            return EmbeddedResourceBlock(uri=res.uri, text=res.text, mime_type=res.mime_type)
        case acp.EmbeddedResourceContentBlock(resource=res):
            return EmbeddedResourceBlock(uri=res.uri, mime_type=res.mime_type, is_binary=True)
    raise TypeError(f"unsupported content block {type(block).__name__}")


def block_to_acp(block: ContentBlock) -> AcpPromptBlock:
    """A stored user block as a replayable ACP block; what we did not keep goes as text."""
    match block:
        case TextBlock(text=text):
            return acp.TextContentBlock(type="text", text=text)
        case ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime):
            return acp.ResourceContentBlock(
                type="resource_link", uri=uri, name=name, title=title, mime_type=mime
            )
        case EmbeddedResourceBlock(uri=uri, text=text, mime_type=mime, is_binary=False):
            return acp.EmbeddedResourceContentBlock(
                type="resource",
                resource=acp.TextResourceContents(uri=uri, text=text or "", mime_type=mime),
            )
    marker = as_model_text(block)
    text = marker.text if isinstance(marker, TextBlock) else ""
    return acp.TextContentBlock(type="text", text=text)


def _text(text: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(type="text", text=text)


def update_for(event: AgentEvent) -> Any:
    match event:
        case TextDelta(message_id=mid, text=text) | Notice(message_id=mid, text=text):
            return acp.AgentMessageChunk(
                session_update="agent_message_chunk", content=_text(text), message_id=mid
            )
        case ThinkingDelta(message_id=mid, text=text):
            return acp.AgentThoughtChunk(
                session_update="agent_thought_chunk", content=_text(text), message_id=mid
            )
        case UserContentReplayed(message_id=mid, block=block):
            return acp.UserMessageChunk(
                session_update="user_message_chunk", content=block_to_acp(block), message_id=mid
            )
        case SessionTitleChanged(title=title):
            return acp.SessionInfoUpdate(session_update="session_info_update", title=title)
    raise TypeError(f"no ACP update for {type(event).__name__}")


def notification_for(session_id: str, event: AgentEvent) -> dict[str, Any]:
    return dump(acp.SessionNotification(session_id=session_id, update=update_for(event)))


def _modes(state: SessionState) -> acp.SessionModeState:
    return acp.SessionModeState(
        current_mode_id=state.current_mode_id,
        available_modes=[
            acp.SessionMode(id=m.id, name=m.name, description=m.description) for m in state.modes
        ],
    )


def config_options(state: SessionState) -> list[acp.SessionConfigOptionSelect]:
    return [
        acp.SessionConfigOptionSelect(
            type="select",
            id=o.id,
            name=o.name,
            description=o.description,
            category=o.category,
            current_value=o.current_value,
            options=[
                acp.SessionConfigSelectOption(value=c.value, name=c.name, description=c.description)
                for c in o.choices
            ],
        )
        for o in state.options
    ]


def new_session_result(state: SessionState) -> dict[str, Any]:
    return dump(
        acp.NewSessionResponse(
            session_id=state.session_id, modes=_modes(state), config_options=config_options(state)
        )
    )


def load_session_result(state: SessionState) -> dict[str, Any]:
    return dump(acp.LoadSessionResponse(modes=_modes(state), config_options=config_options(state)))


def set_config_result(state: SessionState) -> dict[str, Any]:
    return dump(acp.SetSessionConfigOptionResponse(config_options=config_options(state)))


def usage_to_acp(usage: Usage) -> acp.Usage:
    return acp.Usage(
        total_tokens=usage.total_tokens,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_read_tokens=usage.cache_read_tokens or None,
        cached_write_tokens=usage.cache_write_tokens or None,
    )
