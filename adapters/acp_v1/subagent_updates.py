"""Sub-agents on the wire: `subagent_update` (a child session announced on its parent, then
its state kept current), `session_message` (the parent's task to the child, the child's
answer to the parent) and the child's own updates (`sessionId` the child's). The shapes are
the ACP schema's unstable ones (checked against `@agentclientprotocol/sdk` 2.4.0's
`schema.unstable.json`), newer than the pinned SDK, so they are built here as dicts.

A client is sent any of them only when it advertised `clientCapabilities.subagents`; every
other client sees the sub-agent as it always did: one tool call (with progress lines).
Child updates carry their parent's id in `_meta.iac_code.parentSessionId`, which is also how
they are told apart as they are delivered."""

from typing import Any

from adapters.protocol.journal import META_KEY
from domain.events import SessionMessageSent, SubagentChanged, SubagentState
from domain.usage import Usage

SUBAGENT_UPDATES = frozenset({"subagent_update", "session_message", "session_message_chunk"})
PARENT_KEY = "parentSessionId"

# Our states as the schema's work states: a finished run is `idle` with why it stopped.
_STOP_REASONS = {
    SubagentState.DONE: "end_turn",
    SubagentState.FAILED: "error",
    SubagentState.CANCELLED: "cancelled",
}


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "totalTokens": usage.total_tokens,
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cachedReadTokens": usage.cache_read_tokens,
        "cachedWriteTokens": usage.cache_write_tokens,
    }


_LIVE = (SubagentState.RUNNING, SubagentState.WAITING)  # a client may still cancel it


def _state(event: SubagentChanged) -> dict[str, Any]:
    if event.state is SubagentState.RUNNING:
        return {"state": "running"}
    if event.state is SubagentState.WAITING:  # asking its parent's clients for permission
        return {"state": "requires_action"}
    state: dict[str, Any] = {"state": "idle", "stopReason": _STOP_REASONS[event.state]}
    if event.usage is not None:
        state["usage"] = usage_dict(event.usage)
    if event.error is not None:
        state["error"] = {"code": -32603, "message": event.error}
    return state


def subagent_update(event: SubagentChanged) -> dict[str, Any]:
    ours: dict[str, Any] = {"toolCallId": event.tool_call_id, "status": event.state.value}
    if event.agent is not None:
        ours["agent"] = event.agent
    update: dict[str, Any] = {
        "sessionUpdate": "subagent_update",
        "sessionId": event.child_id,
        "state": _state(event),
        "_meta": {META_KEY: ours},
    }
    # What a client may do to it: cancel it while it runs; nothing once it ended.
    if event.state not in _LIVE:
        update["capabilities"] = None
    elif event.cancellable:
        update["capabilities"] = {"cancel": {}}
    if event.title is not None:
        update["title"] = event.title
    if event.description is not None:
        update["description"] = event.description
    return update


def session_message(event: SessionMessageSent) -> dict[str, Any]:
    return {
        "sessionUpdate": "session_message",
        "messageId": event.message_id,
        "senderSessionId": event.sender,
        "recipientSessionId": event.recipient,
        "content": [{"type": "text", "text": event.text}],
    }


def child_params(parent_id: str, child_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": child_id, "update": update, "_meta": {META_KEY: {PARENT_KEY: parent_id}}}


def shows_subagents(capabilities: Any) -> bool:
    """Did the client advertise `subagents` (an object; omitted or null means no)?"""
    return isinstance(capabilities, dict) and isinstance(capabilities.get("subagents"), dict)


def is_subagent_traffic(params: dict[str, Any]) -> bool:
    update = params.get("update")
    if isinstance(update, dict) and update.get("sessionUpdate") in SUBAGENT_UPDATES:
        return True
    meta = params.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and PARENT_KEY in ours


def subagents_shown_to(capabilities: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """`params` as a client with these capabilities is sent them: sub-agent traffic only to
    a client that shows sub-agents; everything else as it is."""
    if is_subagent_traffic(params) and not shows_subagents(capabilities):
        return None
    return params
