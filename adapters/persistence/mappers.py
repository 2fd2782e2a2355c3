"""Rows and JSON to domain objects and back. The domain classes stay unmapped."""

from collections.abc import Iterable, Mapping
from typing import Any

from application.ports.session_store import TurnRecord
from domain.block_dicts import turn_block_dict
from domain.choices import Choices
from domain.client_prompt import ClientPrompt, ClientPromptMode
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
from domain.ids import MessageId, SessionId, ToolCallId
from domain.message import Compaction, Message, MessageKind, Role
from domain.permission import PermissionDecision
from domain.session import Session
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.tool_call import (
    DiffOutput,
    TerminalOutput,
    TextOutput,
    ToolCallRecord,
    ToolCallStatus,
    ToolKind,
    ToolOutput,
)
from domain.totals import Totals
from domain.usage import Usage
from domain.workspace import Workspace


def block_to_json(block: ContentBlock) -> dict[str, Any]:
    if (common := turn_block_dict(block)) is not None:
        return common
    match block:
        case ImageBlock(mime_type=mime, uri=uri, data=data):
            return {"type": "image", "mime_type": mime, "uri": uri, "data": data}
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
            # Rows stored before images were sent have no data: the model gets the marker.
            return ImageBlock(
                mime_type=data["mime_type"], uri=data.get("uri"), data=data.get("data")
            )
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
        "kind": message.kind.value,
        "meta": _meta_to_json(message),
    }


def _meta_to_json(message: Message) -> dict[str, Any] | None:
    meta: dict[str, Any] = {}
    if message.context_tokens is not None:
        meta["context_tokens"] = message.context_tokens
    if (c := message.compaction) is not None:
        meta["compaction"] = {
            "keep_from": c.keep_from,
            "tokens_before": c.tokens_before,
            "tokens_after": c.tokens_after,
            "focus": c.focus,
        }
        if c.window is not None:  # absent in markers stored before it was kept
            meta["compaction"]["window"] = c.window
    if message.typed is not None:
        meta["typed"] = message.typed
    if message.context is not None:
        meta["context"] = message.context
    return meta or None


def _compaction_from_json(data: Mapping[str, Any] | None) -> Compaction | None:
    if not data:
        return None
    keep_from, window = data.get("keep_from"), data.get("window")
    return Compaction(
        keep_from=MessageId(keep_from) if keep_from else None,
        tokens_before=int(data.get("tokens_before") or 0),
        tokens_after=int(data.get("tokens_after") or 0),
        focus=data.get("focus"),
        window=window if isinstance(window, int) else None,
    )


# Enum lookups by value without the Enum call (a load reads every message of a session).
_ROLES = {role.value: role for role in Role}
_KINDS = {kind.value: kind for kind in MessageKind}


def message_from_row(row: Mapping[Any, Any]) -> Message:
    role, kind = row["role"], row.get("kind") or MessageKind.CHAT
    meta = row.get("meta") or {}
    return Message(
        id=MessageId(row["id"]),
        role=_ROLES.get(role) or Role(role),  # Role() raises for an unknown one
        content=tuple([block_from_json(b) for b in row["content"]]),
        created_at=row["created_at"],
        interrupted=bool(row["interrupted"]),
        kind=_KINDS.get(kind) or MessageKind(kind),
        **(_meta_from_json(meta) if meta else {}),
    )


def _meta_from_json(meta: Mapping[str, Any]) -> dict[str, Any]:
    typed, context = meta.get("typed"), meta.get("context")
    return {
        "context_tokens": meta.get("context_tokens"),
        "compaction": _compaction_from_json(meta.get("compaction")),
        "typed": typed if isinstance(typed, str) else None,
        "context": context if isinstance(context, str) else None,
    }


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
        "additional_directories": list(session.additional_directories),
        "mcp_servers": [dict(server) for server in session.mcp_servers],
        "system_prompt": client_prompt_to_json(session.system_prompt),
        "version": session.version,
        **spawn_to_row(session.spawn),
    }


def spawn_to_row(spawn: Spawn | None) -> dict[str, Any]:
    return {
        "spawned_by": spawn.parent_id if spawn else None,
        "spawn_call_id": spawn.tool_call_id if spawn else None,
        "spawn_agent": spawn.agent if spawn else None,
    }


def spawn_from_row(row: Mapping[Any, Any]) -> Spawn | None:
    if row.get("spawned_by") is None:
        return None
    return Spawn(
        parent_id=SessionId(row["spawned_by"]),
        tool_call_id=ToolCallId(row["spawn_call_id"] or ""),
        agent=row["spawn_agent"] or "",
    )


def client_prompt_to_json(prompt: ClientPrompt | None) -> dict[str, Any] | None:
    if prompt is None:
        return None
    return {"mode": prompt.mode.value, "content": list(prompt.texts)}


def client_prompt_from_json(data: Mapping[str, Any] | None) -> ClientPrompt | None:
    if not data:
        return None
    return ClientPrompt(mode=ClientPromptMode(data["mode"]), texts=tuple(data["content"]))


def session_from_row(
    row: Mapping[Any, Any],
    messages: list[Message],
    rejected_tools: Iterable[str],
    totals: Totals,
) -> Session:
    return Session.as_stored(
        id=SessionId(row["id"]),
        workspace=Workspace(
            cwd=row["cwd"],
            additional_directories=tuple(row["additional_directories"] or ()),
            mcp_servers=tuple(row["mcp_servers"] or ()),
            system_prompt=client_prompt_from_json(row["system_prompt"]),
        ),
        choices=Choices(model=row["model"], mode_id=row["mode_id"], config=row["config"] or {}),
        title=row["title"],
        timestamps=Timestamps(created_at=row["created_at"], updated_at=row["updated_at"]),
        history=messages,
        version=row["version"],
        totals=totals,
        rejected_tools=rejected_tools,
        spawn=spawn_from_row(row),
    )


def output_to_json(output: ToolOutput) -> dict[str, Any]:
    match output:
        case DiffOutput(path=path, old_text=old, new_text=new):
            return {"type": "diff", "path": path, "old_text": old, "new_text": new}
        case TextOutput(text=text):
            return {"type": "text", "text": text}
        case TerminalOutput(terminal_id=terminal_id, text=text):
            return {"type": "terminal", "terminal_id": terminal_id, "text": text}
    raise TypeError(f"unknown tool output {output!r}")


def output_from_json(data: Mapping[str, Any]) -> ToolOutput:
    """A stored terminal was released when its call ended: the editor cannot show it again,
    so it comes back as the command's output text."""
    if data.get("type") == "diff":
        return DiffOutput(
            path=data["path"], old_text=data.get("old_text"), new_text=data["new_text"]
        )
    return TextOutput(text=data.get("text", ""))


def tool_call_to_row(session_id: str, record: ToolCallRecord) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "id": record.id,
        "name": record.name,
        "title": record.title,
        "kind": record.kind.value,
        "status": record.status.value,
        "arguments": dict(record.arguments),
        "locations": list(record.locations),
        "output": [output_to_json(o) for o in record.output],
        "raw_output": None if record.raw_output is None else dict(record.raw_output),
    }


def tool_call_from_row(row: Mapping[Any, Any]) -> ToolCallRecord:
    return ToolCallRecord(
        id=row["id"],
        name=row["name"],
        title=row["title"],
        kind=ToolKind(row["kind"]),
        status=ToolCallStatus(row["status"]),
        arguments=row["arguments"],
        locations=tuple(row["locations"]),
        output=tuple(output_from_json(o) for o in row["output"]),
        raw_output=row["raw_output"],
    )


def decision_to_row(session_id: str, decision: PermissionDecision) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "tool_call_id": decision.tool_call_id,
        "tool_name": decision.tool_name,
        "arguments": dict(decision.arguments),
        "option": decision.option.value if decision.option else None,
        "decided_by": decision.decided_by.value,
        "decided_at": decision.decided_at,
    }


def turn_record_from_row(row: Mapping[Any, Any]) -> TurnRecord:
    return TurnRecord(
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        stop_reason=row["stop_reason"],
        requests=row["requests"],
        usage=usage_from_row(row),
        cost=row["cost"],
        error=row["error"],
    )


USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def usage_from_row(row: Mapping[Any, Any]) -> Usage:
    """The token counts of a turns row (or of sums labelled with its column names)."""
    return Usage(**{name: int(row[name] or 0) for name in USAGE_COLUMNS})
