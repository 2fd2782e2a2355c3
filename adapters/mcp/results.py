"""MCP results turned into what the model and the user are given."""

import base64
import binascii
import json

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from adapters.mcp.scrubbing import Scrubber
from application.ports.tools import ToolResult
from domain.tool_call import TextOutput


def tool_result(server: str, tool: str, result: CallToolResult, scrub: Scrubber) -> ToolResult:
    parts = [block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False)]
    text = scrub("\n".join(parts)) or ("(the tool failed)" if result.is_error else "(no output)")
    return ToolResult(
        text=text,
        is_error=result.is_error,
        output=(TextOutput(text=text),),
        raw_output={"server": server, "tool": tool, "isError": result.is_error},
    )


def error_result(server: str, tool: str, message: str) -> ToolResult:
    """A call that did not get a result from the server: the model is told why."""
    return ToolResult(
        text=message,
        is_error=True,
        output=(TextOutput(text=message),),
        raw_output={"server": server, "tool": tool, "isError": True},
    )


def prompt_text(result: GetPromptResult, scrub: Scrubber) -> str:
    return scrub("\n\n".join(block_text(message.content) for message in result.messages))


def block_text(block: ContentBlock) -> str:
    """One content block as text (the model's tool results are text here)."""
    match block:
        case TextContent():
            return block.text
        case ImageContent():
            return binary_marker("image", block.mime_type, block.data)
        case AudioContent():
            return binary_marker("audio", block.mime_type, block.data)
        case EmbeddedResource(resource=TextResourceContents() as resource):
            return resource.text
        case EmbeddedResource(resource=BlobResourceContents() as resource):
            return binary_marker("resource", resource.mime_type or "", resource.blob, resource.uri)
        case ResourceLink():
            return f"[resource {block.uri}]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def binary_marker(kind: str, mime_type: str, data: str, uri: object = None) -> str:
    """`[image image/png, 12 KB]`: says what the content was without passing it on."""
    what = " ".join(part for part in (kind, str(uri) if uri else "", mime_type) if part)
    return f"[{what}, {_size(data)}]"


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data)
    if size < 1024:
        return f"{size} bytes"
    return f"{round(size / 1024)} KB"
