"""Rows and JSON to domain objects and back. The domain classes stay unmapped."""

from collections.abc import Mapping
from typing import Any

from domain.content import (
    AudioBlock,
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    RedactedThinkingBlock,
    ResourceLinkBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.ids import MessageId, SessionId
from domain.message import Message, Role
from domain.session import Session


def block_to_json(block: ContentBlock) -> dict[str, Any]:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ThinkingBlock(thinking=thinking, signature=signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RedactedThinkingBlock(data=data):
            return {"type": "redacted_thinking", "data": data}
        case ToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": dict(input_)}
        case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error):
            return {
                "type": "tool_result",
                "tool_use_id": tid,
                "content": content,
                "is_error": is_error,
            }
        case ImageBlock(mime_type=mime, uri=uri):
            return {"type": "image", "mime_type": mime, "uri": uri}
        case AudioBlock(mime_type=mime):
            return {"type": "audio", "mime_type": mime}
        case ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime):
            return {
                "type": "resource_link",
                "uri": uri,
                "name": name,
                "title": title,
                "mime_type": mime,
            }
        case EmbeddedResourceBlock(uri=uri, text=text, mime_type=mime, is_binary=binary):
            return {
                "type": "resource",
                "uri": uri,
                "text": text,
                "mime_type": mime,
                "is_binary": binary,
            }
    raise TypeError(f"unknown block {block!r}")


def block_from_json(data: Mapping[str, Any]) -> ContentBlock:
    kind = data.get("type")
    match kind:
        case "text":
            return TextBlock(text=data["text"])
        case "thinking":
            return ThinkingBlock(thinking=data["thinking"], signature=data.get("signature"))
        case "redacted_thinking":
            return RedactedThinkingBlock(data=data["data"])
        case "tool_use":
            return ToolUseBlock(id=data["id"], name=data["name"], input=data.get("input") or {})
        case "tool_result":
            return ToolResultBlock(
                tool_use_id=data["tool_use_id"],
                content=data["content"],
                is_error=bool(data.get("is_error")),
            )
        case "image":
            return ImageBlock(mime_type=data["mime_type"], uri=data.get("uri"))
        case "audio":
            return AudioBlock(mime_type=data["mime_type"])
        case "resource_link":
            return ResourceLinkBlock(
                uri=data["uri"],
                name=data["name"],
                title=data.get("title"),
                mime_type=data.get("mime_type"),
            )
        case "resource":
            return EmbeddedResourceBlock(
                uri=data["uri"],
                text=data.get("text"),
                mime_type=data.get("mime_type"),
                is_binary=bool(data.get("is_binary")),
            )
    raise ValueError(f"unknown stored block type {kind!r}")


def message_to_row(session_id: str, position: int, message: Message) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "position": position,
        "id": message.id,
        "role": message.role.value,
        "content": [block_to_json(b) for b in message.content],
        "interrupted": message.interrupted,
        "created_at": message.created_at,
    }


def message_from_row(row: Mapping[str, Any]) -> Message:
    return Message(
        id=MessageId(row["id"]),
        role=Role(row["role"]),
        content=tuple(block_from_json(b) for b in row["content"]),
        created_at=row["created_at"],
        interrupted=bool(row["interrupted"]),
    )


def session_to_row(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "cwd": session.cwd,
        "title": session.title,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "mode_id": session.mode_id,
        "model": session.model,
        "config": dict(session.config),
        "message_count": session.message_count,
    }


def session_from_row(row: Mapping[str, Any], messages: list[Message]) -> Session:
    return Session(
        id=SessionId(row["id"]),
        cwd=row["cwd"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        mode_id=row["mode_id"],
        model=row["model"],
        config=dict(row["config"] or {}),
        messages=messages,
    )
