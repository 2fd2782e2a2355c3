"""session/new in plain JSON, without `acp.schema`: answered while the agent still loads
(bootstrap/early.py). Only params with nothing to open beyond the cwd are taken (no MCP
server, no extra directory, no `_meta`); anything else, and every error, is left to the
full agent, so errors read the same as ever. A test checks that the result equals what
`adapters.acp_v1.openers` answers, field for field."""

import os
from typing import Any

from application.attachments.ownership import Role
from application.dto import SessionState
from domain.config import Choice, SelectOption
from domain.modes import Mode


def plain_new_cwd(params: dict[str, Any] | None) -> str | None:
    """The cwd of params the agent would take as they are, opening nothing else; else None."""
    if not isinstance(params, dict) or not set(params) <= {"cwd", "mcpServers"}:
        return None
    servers, cwd = params.get("mcpServers", []), params.get("cwd")
    if not isinstance(servers, list) or servers:
        return None
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        return None
    return cwd


def plain_new_result(state: SessionState, role: Role) -> dict[str, Any]:
    """What the agent answers a session/new for `state`, to a client given `role`."""
    return {
        "sessionId": state.session_id,
        "modes": {
            "currentModeId": state.current_mode_id,
            "availableModes": [_described({"id": m.id, "name": m.name}, m) for m in state.modes],
        },
        "configOptions": [_option(o) for o in state.options],
        "_meta": {"iac_code": {"role": role.value}},
    }


def _option(option: SelectOption) -> dict[str, Any]:
    shown: dict[str, Any] = {"type": "select", "id": option.id, "name": option.name}
    _described(shown, option)
    if option.category is not None:
        shown["category"] = option.category
    shown["currentValue"] = option.current_value
    shown["options"] = [_choice(c) for c in option.choices]
    return shown


def _choice(choice: Choice) -> dict[str, Any]:
    return _described({"value": choice.value, "name": choice.name}, choice)


def _described(shown: dict[str, Any], of: Mode | SelectOption | Choice) -> dict[str, Any]:
    if of.description is not None:
        shown["description"] = of.description
    return shown
