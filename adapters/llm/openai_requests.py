"""An OpenAI-compatible chat completions request: our messages and model request in the
API's shapes."""

import json
import logging
from collections.abc import Iterable
from typing import Any

from adapters.llm.providers import Dialect
from application.ports.llm import (
    ModelRequest,
)
from domain.content import (
    ContentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    as_model_text,
)
from domain.message import Message, Role

log = logging.getLogger(__name__)


def messages_to_api(system: str, messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Domain history as chat messages: the system prompt first; an assistant turn as its text
    and tool calls (thinking is never sent: another provider's, or not replayable); tool
    results as one `tool` message each, right after the assistant message they answer."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role is Role.ASSISTANT:
            out.extend(_assistant_to_api(message.content))
        else:
            out.extend(_user_to_api(message.content))
    return out


def _assistant_to_api(blocks: tuple[ContentBlock, ...]) -> list[dict[str, Any]]:
    text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(dict(b.input))},
        }
        for b in blocks
        if isinstance(b, ToolUseBlock)
    ]
    if not text and not calls:
        return []  # only thinking: nothing the provider can take back
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _user_to_api(blocks: tuple[ContentBlock, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": b.tool_use_id,
            "content": f"Error: {b.content}" if b.is_error else b.content,
        }
        for b in blocks
        if isinstance(b, ToolResultBlock)
    ]
    # Images reach here only for a model that reads them (the model view made markers else).
    shown = [as_model_text(b, images=True) for b in blocks if not isinstance(b, ToolResultBlock)]
    parts = [p for p in map(_user_part, shown) if p is not None]
    if any(p["type"] == "image_url" for p in parts):
        out.append({"role": "user", "content": parts})
    elif parts:
        # Plain text as a string: some compatible servers take no content-part lists.
        out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
    return out


def _user_part(block: ContentBlock) -> dict[str, Any] | None:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ImageBlock(mime_type=mime, data=str() as data):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    log.info("not sending a %s block to the model", type(block).__name__)
    return None


def request_to_api(request: ModelRequest, dialect: Dialect) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": messages_to_api(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    # OpenAI's reasoning models refuse `max_tokens`; other servers may not know the new name.
    limit = "max_completion_tokens" if dialect is Dialect.OPENAI else "max_tokens"
    kwargs[limit] = request.max_tokens
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in request.tools
        ]
    if request.reasoning_effort:
        kwargs["reasoning_effort"] = request.reasoning_effort
    if dialect is Dialect.DASHSCOPE and request.thinking_budget > 0:
        kwargs["extra_body"] = {"enable_thinking": True, "thinking_budget": request.thinking_budget}
    return kwargs
