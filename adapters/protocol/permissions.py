"""Asks the client with `session/request_permission` and reads its answer, in the official
shape or the product documents' shorthand."""

import logging
from typing import Any

from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import ConnectionClosed
from adapters.protocol.jsonrpc import RpcError
from adapters.protocol.wire import permission_request
from application.ports.permissions import (
    PermissionAsker,
    PermissionRequest,
    PermissionUnavailable,
)
from domain.ids import SessionId
from domain.permission import PermissionOption

log = logging.getLogger(__name__)


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
    def __init__(self, channels: SessionChannels) -> None:
        self._channels = channels

    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        peer = self._channels.peer_of(session_id)
        if peer is None:
            raise PermissionUnavailable("no client is attached to this session")
        try:
            result = await peer.call(
                "session/request_permission", permission_request(session_id, request)
            )
        except ConnectionClosed as exc:
            raise PermissionUnavailable("the client disconnected") from exc
        except RpcError as exc:
            log.warning(
                "client answered the permission request with error %s: %s", exc.code, exc.message
            )
            raise PermissionUnavailable(
                f"the client could not show the permission request ({exc.message})"
            ) from exc
        return read_outcome(result, request)
