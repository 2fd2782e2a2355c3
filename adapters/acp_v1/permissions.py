"""Asks the clients with `session/request_permission` and reads the answer, in the official
shape or the product documents' shorthand.

Who is asked, and which answer counts, is the room's (application.attachments.asking,
through application.attachments.permissions): every client attached to the session gets
its own copy, the first answer wins and the other copies are withdrawn
(`$/cancel_request`). Here: the request's params (the tool call, the options, the rules
remembered that do not cover it), and the answer read (each connection shows the room's
PermissionQuestion so: adapters/acp_v1/questions.py).
"""

import logging
from typing import Any

from acp import schema as acp

from adapters.acp_v1.updates import shown_data
from adapters.acp_v1.wire import dump, tool_locations, tool_output_to_acp
from adapters.protocol.journal import META_KEY
from application.ports.permissions import PermissionRequest
from domain.permission import PermissionOption
from domain.project_rules import ProjectRule

log = logging.getLogger(__name__)

METHOD = "session/request_permission"


def _rule_meta(rule: ProjectRule) -> dict[str, Any]:
    command = rule.command
    return {
        "id": rule.id,
        "tool": rule.tool_name,
        "cwd": rule.cwd,
        "command": list(command.words) if command else None,
        "exact": command.exact if command else None,
        "covers": rule.description,
    }


def permission_request(session_id: str, request: PermissionRequest) -> dict[str, Any]:
    tool_call = acp.ToolCallUpdate(
        tool_call_id=request.tool_call_id,
        title=request.title,
        kind=request.kind.value,
        status="pending",
        raw_input=shown_data(dict(request.arguments)),
        content=[tool_output_to_acp(o) for o in request.preview] or None,
        locations=tool_locations(request.locations),
    )
    options = [
        acp.PermissionOption(
            option_id=request.option_id(o), name=request.option_name(o), kind=o.kind
        )
        for o in request.options
    ]
    meta: dict[str, Any] | None = None
    if request.remembered:
        # Rules the user granted for this tool in this project that do not cover this call:
        # the client can say why it is asked although "always" was chosen before.
        meta = {"iac-code": {"rememberedRules": [_rule_meta(r) for r in request.remembered]}}
    if request.child_session_id is not None:
        # A sub-agent's call, asked of its parent's clients: which child asks.
        child = {"childSessionId": request.child_session_id, "agent": request.agent}
        meta = {**(meta or {}), META_KEY: child}
    params = dump(
        acp.RequestPermissionRequest(
            session_id=session_id, tool_call=tool_call, options=options, field_meta=meta
        )
    )
    # The tool's stable name, as its `tool_call` gives it (a field newer than the SDK's model).
    params["toolCall"] = {**params["toolCall"], "name": request.tool_name}
    return params


def read_outcome(result: Any, request: PermissionRequest) -> PermissionOption | None:
    """The chosen option, None for cancelled. Anything not offered counts as a rejection.

    Official: {"outcome": {"outcome": "selected", "optionId": "allow_once"}} or
    {"outcome": {"outcome": "cancelled"}}. Shorthand: {"outcome": "allowed",
    "option_id": "allow_once"} or {"outcome": "denied"}.
    """
    offered = {request.option_id(o): o for o in request.options}
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict):
        kind, option_id = outcome.get("outcome"), outcome.get("optionId")
    else:
        kind, option_id = outcome, result.get("option_id") if isinstance(result, dict) else None
        if kind == "denied" and option_id is None:
            return PermissionOption.REJECT_ONCE
        if kind == "allowed" and option_id is None:
            option_id = request.option_id(PermissionOption.ALLOW_ONCE)
    if kind == "cancelled":
        return None
    if kind in ("selected", "allowed", "denied") and option_id in offered:
        chosen = offered[option_id]
        # "denied" never grants: an allow option id beside it is read as a plain rejection.
        return chosen if kind != "denied" or not chosen.allows else PermissionOption.REJECT_ONCE
    if kind == "denied":
        return PermissionOption.REJECT_ONCE
    log.warning("permission answer %r did not pick an offered option; treated as rejected", result)
    return PermissionOption.REJECT_ONCE
