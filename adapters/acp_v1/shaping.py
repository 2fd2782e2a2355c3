"""What one client is sent of an update built once for all of a session's clients.

Every update is rendered and journaled once; the shapes newer than some clients (notices,
compactions) are decided per client as it is sent, live and when a reconnecting client is
served from the journal alike."""

from typing import Any

from adapters.acp_v1.compaction_updates import shown_to
from adapters.acp_v1.notices import shaped_for
from adapters.acp_v1.subagent_updates import subagents_shown_to


def for_client(params: dict[str, Any], capabilities: Any) -> dict[str, Any] | None:
    """`session/update` params as a client with these `clientCapabilities` is sent them;
    None: not at all. Everything but a notice, a compaction or sub-agent traffic (only to
    clients that show sub-agents) passes through untouched."""
    shaped = subagents_shown_to(capabilities, params)
    shaped = None if shaped is None else shaped_for(shaped, capabilities)
    return None if shaped is None else shown_to(capabilities, shaped)


def message_for_client(message: dict[str, Any], capabilities: Any) -> dict[str, Any] | None:
    """A whole JSON-RPC message as `for_client` would send it (other methods unchanged)."""
    params = message.get("params")
    if message.get("method") != "session/update" or not isinstance(params, dict):
        return message
    shaped = for_client(params, capabilities)
    return None if shaped is None else {**message, "params": shaped}
