"""Backpressure: what still waits to be written to a slow client is merged, not queued.

A fast model writes thousands of small `session/update`s a turn; a client that reads more
slowly would otherwise get them all, one by one, long after the model has finished, while
the agent holds them. Two updates that wait side by side become one when one can stand for
both: text chunks of the same message or compaction summary (their texts joined) and
updates of the same tool call (the later one's fields replace the earlier one's, as a client
applies them; not two different statuses, so that a client sees each). What is already
written is never touched, and the first chunk is never held back.
"""

from typing import Any

# A merged chunk stops growing here and the next delta starts a new one: a slow client
# still gets its text in pieces, and re-encoding a pending frame stays cheap.
MAX_MERGED_CHARS = 4096

# The text chunks that may join, each kind with the key naming what it is a chunk of.
_CHUNK_OWNERS = {
    "agent_message_chunk": "messageId",
    "agent_thought_chunk": "messageId",
    "compaction_summary_chunk": "compactionId",  # a compaction's summary as it is written
}


def _update(message: dict[str, Any]) -> dict[str, Any] | None:
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update if isinstance(update, dict) else None


def _chunk_text(update: dict[str, Any]) -> str | None:
    """The text of a plain text chunk (no annotations or _meta that could not be joined)."""
    owner = _CHUNK_OWNERS.get(str(update.get("sessionUpdate")))
    if owner is None or update.keys() != {"sessionUpdate", "content", owner}:
        return None
    content = update["content"]
    if not isinstance(content, dict) or content.keys() != {"type", "text"}:
        return None
    text = content["text"]
    return text if content["type"] == "text" and isinstance(text, str) else None


def _hides_a_status(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Folding would drop a status the client has not seen (in_progress between pending and
    completed): a status is what a client shows of a call, so each one goes out. The writer
    may lag behind even a client that keeps up, so this is not only for slow readers."""
    return "status" in first and "status" in second and first["status"] != second["status"]


def merged(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any] | None:
    """One message standing for `earlier` followed by `later`, or None when they must both
    go. Neither argument is changed."""
    first, second = _update(earlier), _update(later)
    if first is None or second is None:
        return None
    if earlier["params"].get("sessionId") != later["params"].get("sessionId"):
        return None
    kind = first.get("sessionUpdate")
    if kind != second.get("sessionUpdate"):
        return None
    if kind == "tool_call_update":
        if first.get("toolCallId") != second.get("toolCallId") or _hides_a_status(first, second):
            return None
        return _joined(earlier, later, {**first, **second})
    head, tail = _chunk_text(first), _chunk_text(second)
    if head is None or tail is None:
        return None
    owner = _CHUNK_OWNERS[str(kind)]
    if first[owner] != second[owner]:
        return None
    if len(head) + len(tail) > MAX_MERGED_CHARS:
        return None
    update = {**first, "content": {"type": "text", "text": head + tail}}
    return _joined(earlier, later, update)


def _joined(earlier: dict[str, Any], later: dict[str, Any], update: Any) -> dict[str, Any]:
    """The merged message: the later one's `_meta` (its journal number: what the client has
    received once it has this one)."""
    params = {**earlier["params"], "update": update}
    if "_meta" in later["params"]:
        params["_meta"] = later["params"]["_meta"]
    return {**earlier, "params": params}
