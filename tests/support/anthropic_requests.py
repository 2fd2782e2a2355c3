"""What a scripted Anthropic server records of each request, and the prompt cache it can
simulate from the requests' ``cache_control`` breakpoints."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tests.support.anthropic_replies import Reply


def sent_key(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries: `x-api-key`, or a bearer token (as newer SDKs send it)."""
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    return headers.get("x-api-key") or bearer or None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    number: int  # 1-based, in arrival order
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    reply: Reply | None  # None when the script was exhausted (or the path was wrong)
    # The usage the simulated cache reported (ScriptedAnthropic(cache=True)), else None.
    usage: Mapping[str, int] | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as sent, without its cache_control markers and without the
        `<environment>` block the agent sends with each turn's prompt (see `environment`)."""
        return [_without_environment(m) for m in _without_markers(self.body["messages"])]

    @property
    def environment(self) -> list[str]:
        """The `<environment>` blocks the request carries, in order (one per turn)."""
        return [
            block["text"]
            for message in self.body["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if _is_environment(block)
        ]

    @property
    def system(self) -> str:
        """The system prompt's text, whether sent as a string or as text blocks."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "".join(block.get("text", "") for block in system)

    @property
    def cache_markers(self) -> list[str]:
        """Where the request put cache_control breakpoints, in the API's prefix order."""
        return [path for path, _, marked in _prefix_items(self.body) if marked]


def _is_environment(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and str(block.get("text", "")).startswith("<environment>")
    )


def _without_environment(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(_is_environment(b) for b in content):
        return message
    return {**message, "content": [b for b in content if not _is_environment(b)]}


_LOOKBACK: Final = 20  # blocks before a breakpoint the API checks for an earlier entry


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _prefix_items(body: Any) -> Iterator[tuple[str, str, bool]]:
    """(path, JSON without markers, marked) for each block of the request's prefix: the
    tools, the system blocks, then each message's blocks (with its role)."""
    if not isinstance(body, dict):
        return
    for i, tool in enumerate(body.get("tools") or []):
        yield f"tools[{i}]", json.dumps(_without_markers(tool)), "cache_control" in tool
    system = body.get("system")
    if isinstance(system, str) and system:
        yield "system", json.dumps(system), False
    elif isinstance(system, list):
        for i, block in enumerate(system):
            yield f"system[{i}]", json.dumps(_without_markers(block)), "cache_control" in block
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, block in enumerate(blocks or []):
            item = json.dumps([message.get("role"), j, _without_markers(block)])
            marked = isinstance(block, dict) and "cache_control" in block
            yield f"messages[{i}].content[{j}]", item, marked


class PromptCache:
    """The provider's prompt cache, by exact prefix: what one request marked, a later one
    with the same prefix reads. Entries never expire (a test is shorter than the TTL)."""

    def __init__(self) -> None:
        self._entries: set[str] = set()

    def usage(self, body: Any) -> dict[str, int]:
        keys: list[str] = []
        ends: list[int] = []  # characters of the prefix up to each block
        breakpoints: list[int] = []
        digest = hashlib.sha256(str(body.get("model")).encode() if isinstance(body, dict) else b"")
        chars = 0
        for index, (_, item, marked) in enumerate(_prefix_items(body)):
            digest.update(item.encode() + b"\0")
            keys.append(digest.hexdigest())
            chars += len(item)
            ends.append(chars)
            if marked:
                breakpoints.append(index)
        read = 0
        for point in breakpoints:
            for index in range(point, max(-1, point - _LOOKBACK - 1), -1):
                if keys[index] in self._entries:
                    read = max(read, ends[index] // 4)
                    break
        written = max(0, ends[breakpoints[-1]] // 4 - read) if breakpoints else 0
        self._entries.update(keys[point] for point in breakpoints)
        return {
            "input_tokens": chars // 4 - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def with_usage(events: list[tuple[str, Any]], usage: Mapping[str, int]) -> list[tuple[str, Any]]:
    """The events with message_start's usage counts replaced by `usage`."""
    replaced = []
    for event_type, data in events:
        if event_type == "message_start":
            message = data["message"]
            data = {**data, "message": {**message, "usage": {**message["usage"], **usage}}}
        replaced.append((event_type, data))
    return replaced
