"""Compactions on the wire: `compaction_update` (started, then completed, failed or
cancelled, under one `compactionId`) and `compaction_summary_chunk` (the summary as the model
writes it). The shapes are the ACP schema's (checked against `@agentclientprotocol/sdk`
2.4.0's `schema.json`), newer than the pinned SDK, so they are built here as dicts.

A client may send them only when it advertised `clientCapabilities.session.compaction`.
Every session update is built once for all of a session's clients (and journaled so), and
what each client is sent is decided as it is sent (`shown_to`): a client without the
capability gets a completed compaction as the chat notice it always got, and nothing of
the rest.

The counts go in `_meta.iac_code`: `tokensBefore` (the context meter's estimate that asked
for the compaction), `tokensAfter` (the compacted context's, the `used` of the
`usage_update` that follows, and what the next compaction is measured from) and `size`
(the model's context window they were counted against, as `usage_update.size`)."""

from typing import Any

from adapters.protocol.journal import META_KEY
from domain.events import CompactionChanged, CompactionStatus, CompactionSummaryDelta
from domain.message import compacted_notice

COMPACTION_UPDATES = frozenset({"compaction_update", "compaction_summary_chunk"})


def _text(text: str) -> dict[str, Any]:
    return {"text": text, "type": "text"}  # (updates.text_block, which builds on this module)


def compaction_update(event: CompactionChanged) -> dict[str, Any]:
    counts: dict[str, int] = {"tokensBefore": event.tokens_before}
    if event.tokens_after is not None:
        counts["tokensAfter"] = event.tokens_after
    if event.window is not None:
        counts["size"] = event.window
    update: dict[str, Any] = {
        "compactionId": event.compaction_id,
        "status": event.status.value,
        "_meta": {META_KEY: counts},
        "sessionUpdate": "compaction_update",
    }
    if event.error is not None:
        update["error"] = event.error
    return update


def summary_chunk(event: CompactionSummaryDelta) -> dict[str, Any]:
    return {
        "compactionId": event.compaction_id,
        "content": _text(event.text),
        "sessionUpdate": "compaction_summary_chunk",
    }


def shows_compactions(capabilities: Any) -> bool:
    """Did the client advertise `session.compaction` (an object; null means no)?"""
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    return isinstance(session, dict) and isinstance(session.get("compaction"), dict)


def shown_to(capabilities: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """`session/update` params as a client with these capabilities is sent them (None:
    not at all). Only compaction updates differ; the notification's own `_meta` (its
    journal number) stays with what stands for it."""
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") not in COMPACTION_UPDATES:
        return params  # every update but these, on the streaming path: two lookups
    if shows_compactions(capabilities):
        return params
    if update.get("status") != CompactionStatus.COMPLETED:  # started, failed, a chunk
        return None
    counts = update["_meta"][META_KEY]
    text = compacted_notice(counts["tokensBefore"], counts["tokensAfter"])
    notice = {
        "content": _text(text),
        "messageId": update["compactionId"],
        "sessionUpdate": "agent_message_chunk",
    }
    return {**params, "update": notice}
