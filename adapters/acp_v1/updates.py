"""The `session/update` payloads a replay sends (and a live turn sends most), built as plain
dicts: the same JSON, key for key and in the same order, as dumping the SDK's models
(`tests/unit/adapters/acp_v1/test_updates.py` compares the two), plus the fields newer schema
releases added that the pinned SDK's models lack (`NEWER_THAN_SDK`). Building and
validating a pydantic model per update cost most of a long session's load, and the first
load after start also paid for building those models' validators."""

from collections.abc import Mapping
from typing import Any

from adapters.acp_v1.compaction_updates import compaction_update, summary_chunk
from adapters.acp_v1.subagent_updates import session_message, subagent_update
from domain.content import (
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    as_model_text,
)
from domain.events import (
    AgentEvent,
    CompactionChanged,
    CompactionSummaryDelta,
    Notice,
    PlanUpdated,
    SessionMessageSent,
    SubagentChanged,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UserContentReplayed,
)
from domain.text import map_strings
from domain.tool_call import DiffOutput, TerminalOutput, TextOutput, ToolCallStatus, ToolOutput

# What one field of a tool call may show the client. A 20 MiB write would otherwise travel
# three times (input, diff old and new) in one message, past every transport's limit; the
# model and the file get everything, the client a marked prefix.
MAX_SHOWN_CHARS = 256 * 1024


# Fields of an update kind that the schema has and the pinned SDK's models do not (ACP
# schema after v1.19; checked against @agentclientprotocol/sdk 2.4.0's schema.json).
NEWER_THAN_SDK: dict[str, tuple[str, ...]] = {"tool_call": ("name",)}


def shown(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [truncated for display: {limit:,} of {len(text):,} characters]"


def shown_data(value: Any) -> Any:
    """A JSON-like value with every long string capped for display."""
    return map_strings(value, shown)


def update_dict(event: AgentEvent) -> dict[str, Any] | None:
    """The update's JSON for the kinds built here; None for the others (the SDK's models
    dump those: they are rare)."""
    match event:
        case TextDelta(message_id=mid, text=text) | Notice(message_id=mid, text=text):
            return _chunk("agent_message_chunk", text_block(text), mid)
        case ThinkingDelta(message_id=mid, text=text):
            return _chunk("agent_thought_chunk", text_block(text), mid)
        case UserContentReplayed(message_id=mid, block=block):
            return _chunk("user_message_chunk", user_block(block), mid)
        case ToolCallStarted():
            return tool_call_start(event)
        case ToolCallUpdated():
            return tool_call_progress(event)
        case PlanUpdated(entries=entries):
            plan = [
                {"content": e.content, "priority": e.priority.value, "status": e.status.value}
                for e in entries
            ]
            return {"entries": plan, "sessionUpdate": "plan"}
        case CompactionChanged():
            return compaction_update(event)
        case CompactionSummaryDelta():
            return summary_chunk(event)
        case SubagentChanged():
            return subagent_update(event)
        case SessionMessageSent():
            return session_message(event)
    return None


def _chunk(kind: str, content: dict[str, Any], message_id: str | None) -> dict[str, Any]:
    if message_id is None:
        return {"content": content, "sessionUpdate": kind}
    return {"content": content, "messageId": message_id, "sessionUpdate": kind}


def text_block(text: str) -> dict[str, Any]:
    return {"text": text, "type": "text"}


def user_block(block: ContentBlock) -> dict[str, Any]:
    """A stored user block as a replayable ACP block; what we did not keep goes as text."""
    match block:
        case TextBlock(text=text):
            return text_block(text)
        case ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime):
            link = {"mimeType": mime, "name": name, "title": title, "uri": uri}
            return _without_none({**link, "type": "resource_link"})
        case EmbeddedResourceBlock(uri=uri, text=text, mime_type=mime, is_binary=False):
            resource = _without_none({"mimeType": mime, "text": text or "", "uri": uri})
            return {"resource": resource, "type": "resource"}
        case ImageBlock(mime_type=mime, uri=uri, data=str() as data):
            return _without_none({"data": data, "mimeType": mime, "uri": uri, "type": "image"})
    marker = as_model_text(block)
    return text_block(marker.text if isinstance(marker, TextBlock) else "")


def _status(status: ToolCallStatus | None) -> str | None:
    # ACP has no "cancelled" status: clients mark cancelled calls themselves; we say failed.
    if status is None:
        return None
    return "failed" if status is ToolCallStatus.CANCELLED else status.value


def tool_output(output: ToolOutput) -> dict[str, Any]:
    match output:
        case DiffOutput(path=path, old_text=old, new_text=new):
            if old is None:
                return {"path": path, "newText": shown(new), "type": "diff"}
            return {"path": path, "oldText": shown(old), "newText": shown(new), "type": "diff"}
        case TextOutput(text=text):
            return {"content": text_block(shown(text)), "type": "content"}
        case TerminalOutput(terminal_id=terminal_id):
            # The editor shows its terminal live (and keeps showing it once released).
            return {"terminalId": terminal_id, "type": "terminal"}
    raise TypeError(f"unknown tool output {output!r}")


def locations(paths: tuple[str, ...]) -> list[dict[str, Any]] | None:
    return [{"path": p} for p in paths] or None


def tool_call_start(event: ToolCallStarted) -> dict[str, Any]:
    return _without_none(
        {
            "toolCallId": event.tool_call_id,
            "title": event.title,
            "name": event.name,  # the tool's stable name: `bash`, `mcp__github__create_issue`
            "kind": event.kind.value,
            "status": _status(event.status),
            "locations": locations(event.locations),
            "rawInput": _raw(event.arguments),
            "sessionUpdate": "tool_call",
        }
    )


def tool_call_progress(event: ToolCallUpdated) -> dict[str, Any]:
    content = None if event.output is None else [tool_output(o) for o in event.output]
    return _without_none(
        {
            "toolCallId": event.tool_call_id,
            "status": _status(event.status),
            "title": event.title,
            "content": content,
            "locations": None if event.locations is None else locations(event.locations),
            "rawInput": _raw(event.arguments),
            "rawOutput": _raw(event.raw_output),
            "sessionUpdate": "tool_call_update",
        }
    )


def _raw(value: Mapping[str, object] | None) -> dict[str, Any] | None:
    return None if value is None else shown_data(dict(value))


def _without_none(fields: dict[str, Any]) -> dict[str, Any]:
    """As the models dump with exclude_none: top-level fields only (None inside a raw input
    or output is data, and stays)."""
    return {k: v for k, v in fields.items() if v is not None}
