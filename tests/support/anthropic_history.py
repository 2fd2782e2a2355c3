"""Checks that a conversation (and its ``cache_control`` breakpoints) is one the real
Anthropic API would accept."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

# ---------------------------------------------------------------------------------------------
# What the real provider accepts as a conversation
# ---------------------------------------------------------------------------------------------


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content.strip():
            raise AssertionError(f"{where}.content: empty string content")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise AssertionError(f"{where}.content: must be a string or a list, got {content!r}")
    if not content:
        raise AssertionError(f"{where}.content: empty content list")
    for j, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise AssertionError(f"{where}.content[{j}]: not a typed block: {block!r}")
    return content


_IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _check_image(block: Mapping[str, Any], at: str, role: str) -> None:
    if role != "user":
        raise AssertionError(f"{at}: image block in a {role} message")
    source = block.get("source")
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        raise AssertionError(f"{at}: image source must be base64, got {source!r:.200}")
    if source.get("media_type") not in _IMAGE_TYPES:
        raise AssertionError(f"{at}: image media_type {source.get('media_type')!r} not supported")
    if not isinstance(source.get("data"), str) or not source["data"]:
        raise AssertionError(f"{at}: image without data")


def assert_valid_history(messages: Iterable[Mapping[str, Any]] | Any) -> None:
    """Fail with a precise AssertionError unless the real API would accept `messages`."""
    if not isinstance(messages, list | tuple):
        raise AssertionError(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise AssertionError("messages: empty conversation")
    previous_role: str | None = None
    previous_tool_uses: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise AssertionError(f"{where}: not an object: {message!r}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise AssertionError(f"{where}.role: must be 'user' or 'assistant', got {role!r}")
        if i == 0 and role != "user":
            raise AssertionError(f"{where}: the conversation must start with a user message")
        if role == previous_role:
            raise AssertionError(
                f"{where}: two {role} messages in a row (messages[{i - 1}] and {where}); "
                "roles must alternate"
            )
        blocks = _blocks(message.get("content"), where)

        results = [b for b in blocks if b["type"] == "tool_result"]
        if previous_tool_uses:
            answered = [b.get("tool_use_id") for b in results]
            missing = [t for t in previous_tool_uses if t not in answered]
            if missing:
                raise AssertionError(
                    f"{where}: tool_use id(s) {missing} from messages[{i - 1}] have no "
                    "tool_result in this message"
                )
        if results:
            leading = 0
            while leading < len(blocks) and blocks[leading]["type"] == "tool_result":
                leading += 1
            if leading != len(results):
                raise AssertionError(
                    f"{where}.content[{leading}]: tool_result blocks must come before any "
                    "other content in a user message"
                )
        seen_results: set[str] = set()
        tool_uses: list[str] = []
        for j, block in enumerate(blocks):
            at = f"{where}.content[{j}]"
            kind = block["type"]
            if kind == "text":
                value = block.get("text")
                if not isinstance(value, str) or not value.strip():
                    raise AssertionError(f"{at}: text block must hold non-whitespace text")
            elif kind in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    raise AssertionError(f"{at}: {kind} block in a {role} message")
                if kind == "thinking":
                    if not isinstance(block.get("thinking"), str):
                        raise AssertionError(f"{at}: thinking block without thinking text")
                    signature = block.get("signature")
                    if not isinstance(signature, str) or not signature:
                        raise AssertionError(f"{at}: thinking block without a signature")
                elif not block.get("data"):
                    raise AssertionError(f"{at}: redacted_thinking block without data")
            elif kind == "tool_use":
                if role != "assistant":
                    raise AssertionError(f"{at}: tool_use block in a {role} message")
                tool_id = block.get("id")
                if not isinstance(tool_id, str) or not tool_id:
                    raise AssertionError(f"{at}: tool_use block without an id")
                if tool_id in tool_uses:
                    raise AssertionError(f"{at}: duplicate tool_use id {tool_id!r}")
                if not isinstance(block.get("name"), str) or not block["name"]:
                    raise AssertionError(f"{at}: tool_use block without a name")
                if not isinstance(block.get("input"), dict):
                    raise AssertionError(f"{at}: tool_use input must be an object")
                tool_uses.append(tool_id)
            elif kind == "tool_result":
                if role != "user":
                    raise AssertionError(f"{at}: tool_result block in a {role} message")
                tool_id = block.get("tool_use_id")
                if tool_id not in previous_tool_uses:
                    raise AssertionError(
                        f"{at}: tool_result for {tool_id!r} does not answer a tool_use of "
                        f"the message right before (which used {previous_tool_uses})"
                    )
                if tool_id in seen_results:
                    raise AssertionError(f"{at}: second tool_result for {tool_id!r}")
                seen_results.add(tool_id)
            elif kind == "image":
                _check_image(block, at, role)
        previous_role = role
        previous_tool_uses = tool_uses
    if previous_tool_uses:
        raise AssertionError(
            f"messages[{len(messages) - 1}]: tool_use id(s) {previous_tool_uses} are never "
            "answered (the conversation ends on them)"
        )


_UNCACHEABLE: Final = ("thinking", "redacted_thinking")


def assert_valid_cache_markers(body: Mapping[str, Any]) -> None:
    """Fail unless the real API would accept the request's cache_control breakpoints: at
    most 4, each ``{"type": "ephemeral"}`` (optionally with a ttl), none on a thinking block
    or an empty text block."""
    placed: list[tuple[str, Any]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            placed.append((f"tools[{i}]", tool))
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            placed.append((f"system[{i}]", block))
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" in block:
                placed.append((f"messages[{i}].content[{j}]", block))
    if len(placed) > 4:
        raise AssertionError(
            f"{len(placed)} cache_control breakpoints ({[p for p, _ in placed]}); at most 4"
        )
    for at, block in placed:
        marker = block["cache_control"]
        if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
            raise AssertionError(f"{at}.cache_control: must be {{'type': 'ephemeral'}}")
        if set(marker) - {"type", "ttl"}:
            raise AssertionError(f"{at}.cache_control: unknown fields {sorted(marker)}")
        if block.get("type") in _UNCACHEABLE:
            raise AssertionError(f"{at}: a {block['type']} block cannot carry cache_control")
        if block.get("type") == "text" and not block.get("text"):
            raise AssertionError(f"{at}: an empty text block cannot carry cache_control")
