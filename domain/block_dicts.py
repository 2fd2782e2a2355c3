"""The blocks of a model's turn as plain dicts. The Messages API spells them this way, and
the session store keeps them the same way, so both build them here.

Images, audio and resources differ between the two (the API wants a base64 source, the
store keeps the URI and the MIME type), so each side spells those itself."""

from typing import Any

from domain.content import (
    ContentBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def turn_block_dict(
    block: ContentBlock, *, no_signature: str | None = None
) -> dict[str, Any] | None:
    """The block's dict, or None if it is not one of a turn's blocks. `no_signature`: what
    a thinking block without a signature carries (the API wants a string; the store
    keeps the absence)."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ThinkingBlock(thinking=thinking, signature=signature):
            shown = signature if signature is not None else no_signature
            return {"type": "thinking", "thinking": thinking, "signature": shown}
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
    return None
