"""Checks that a conversation is one the real OpenAI chat-completions API would accept."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def assert_valid_chat(messages: Iterable[Mapping[str, Any]] | Any) -> None:
    """Fail with a precise AssertionError unless OpenAI would accept `messages`: known roles,
    every assistant tool call answered by a `tool` message right after it (and no other
    `tool` message), no empty user message."""
    if not isinstance(messages, list | tuple) or not messages:
        raise AssertionError(f"messages must be a non-empty list, got {messages!r:.200}")
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise AssertionError(f"{where}: unknown role {role!r}")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise AssertionError(
                    f"{where}: tool message for {call_id!r} answers no open tool call "
                    f"(open: {open_calls})"
                )
            open_calls.remove(call_id)
            continue
        if open_calls:
            raise AssertionError(f"{where}: tool call(s) {open_calls} were never answered")
        if role == "user" and not message.get("content"):
            raise AssertionError(f"{where}: empty user message")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not calls and not message.get("content"):
                raise AssertionError(f"{where}: assistant message with no content or calls")
            for call in calls:
                function = call.get("function") or {}
                if not call.get("id") or not function.get("name"):
                    raise AssertionError(f"{where}: tool call without id or name: {call!r}")
                json.loads(function.get("arguments", ""))  # must be a JSON text
                open_calls.append(call["id"])
    if open_calls:
        raise AssertionError(f"tool call(s) {open_calls} are never answered")
