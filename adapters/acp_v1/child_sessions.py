"""Sub-agents' sessions on the wire (our extension; ACP has no parent filter for
session/list): `session/list` with `_meta.iac_code.parentSessionId` lists that session's
children, each naming its parent, the tool call that started it and its agent."""

from collections.abc import Mapping
from typing import Any

from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from domain.spawn import Spawn

PARENT_KEY = "parentSessionId"


def listed_parent(meta: Mapping[str, Any] | None) -> str | None:
    """The parent whose children a session/list asks for; None: the top-level sessions."""
    ours = (meta or {}).get("iac_code")
    parent = ours.get(PARENT_KEY) if isinstance(ours, Mapping) else None
    if parent is None or (isinstance(parent, str) and parent):
        return parent
    raise RpcError(
        INVALID_PARAMS,
        f"Invalid params: _meta.iac_code.{PARENT_KEY} must be a session id.",
        {"field": f"_meta.iac_code.{PARENT_KEY}", "value": parent},
    )


def spawn_meta(spawn: Spawn | None) -> dict[str, Any] | None:
    """A child's entry says where it came from; a top-level session's has no `_meta`."""
    if spawn is None:
        return None
    return {
        "iac_code": {
            PARENT_KEY: spawn.parent_id,
            "toolCallId": spawn.tool_call_id,
            "agent": spawn.agent,
        }
    }
