"""Asks the clients with `session/request_permission` and reads the answer, in the official
shape or the product documents' shorthand.

Who is asked, and which answer counts, is the room's (application.attachments.asking):
every client attached to the session gets its own copy, the first answer wins and the
other copies are withdrawn (`$/cancel_request`). Here: the request's params, and the
answer read.
"""

import logging
from typing import Any

from adapters.protocol.wire import permission_request
from application.attachments.room import Attachments
from application.ports.permissions import PermissionAsker, PermissionRequest
from domain.ids import SessionId
from domain.permission import PermissionOption

log = logging.getLogger(__name__)

METHOD = "session/request_permission"


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


class AcpPermissionAsker(PermissionAsker):
    def __init__(self, room: Attachments) -> None:
        self._room = room

    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        params = permission_request(session_id, request)
        answer = await self._room.ask_permission(
            session_id, str(request.tool_call_id), METHOD, params
        )
        return read_outcome(answer, request)
