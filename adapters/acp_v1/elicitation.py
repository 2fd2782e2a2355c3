"""Asks the clients with `elicitation/create` and reads their answer; tells them with
`elicitation/complete` that a url-mode step is done.

The shapes are newer than the pinned SDK's models (checked against `schema.json` of
@agentclientprotocol/sdk 2.4.0), so they are built and read as plain dicts here. Who is
asked is the room's (application.attachments): every live client of the session that
advertised the mode (`clientCapabilities.elicitation.form` / `.url`), the first answer
winning and the other copies withdrawn with `$/cancel_request`, as a permission request
goes (each connection shows the room's ElicitationQuestion so:
adapters/acp_v1/questions.py).
"""

import logging
from collections.abc import Callable, Mapping
from typing import Any

from adapters.protocol.connection import Connection
from application.attachments.room import Attachments
from application.ports.elicitation import (
    Elicitation,
    ElicitationAnswer,
    ElicitationMode,
    ElicitationUnavailable,
    Elicitor,
)
from application.ports.permissions import PermissionUnavailable
from application.ports.questions import ElicitationQuestion
from domain.questions import ElicitationAction

log = logging.getLogger(__name__)

METHOD = "elicitation/create"
COMPLETE = "elicitation/complete"
# What a form's JSON Schema may say at its top (the schema's ElicitationSchema).
_FORM_KEYS = {"title": str, "description": str, "properties": dict, "required": list}


def advertised(capabilities: Any, mode: ElicitationMode) -> bool:
    """`{"elicitation": {"form": {}}}`: an object (even empty) advertises the mode; absent
    or null does not."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(elicitation, dict) and isinstance(elicitation.get(mode.value), dict)


def can_show(mode: ElicitationMode) -> Callable[[Connection], bool]:
    return lambda client: advertised(client.client_capabilities, mode)


def elicitation_params(session_id: str, elicitation: Elicitation) -> dict[str, Any]:
    """`CreateElicitationRequest`, session-scoped (with the tool call that asks, if any)."""
    params: dict[str, Any] = {
        "sessionId": session_id,
        "message": elicitation.message,
        "mode": elicitation.mode.value,
    }
    if elicitation.tool_call_id is not None:
        params["toolCallId"] = elicitation.tool_call_id
    if elicitation.mode is ElicitationMode.URL:
        params["url"] = elicitation.url
        params["elicitationId"] = elicitation.elicitation_id
    else:
        params["requestedSchema"] = form_schema(elicitation.schema or {})
    return params


def form_schema(schema: Mapping[str, object]) -> dict[str, Any]:
    """A flat object schema: what the schema's ElicitationSchema holds, nothing else (an
    MCP server's schema may carry more, e.g. `$schema`)."""
    form: dict[str, Any] = {"type": "object", "properties": {}}
    for key, kind in _FORM_KEYS.items():
        value = schema.get(key)
        if isinstance(value, kind):
            form[key] = value
    if "required" in form:
        form["required"] = [name for name in form["required"] if isinstance(name, str)]
    return form


def _value(value: object) -> bool:
    """A value the schema's ElicitationContentValue allows."""
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return isinstance(value, str | int | float | bool)


def read_answer(result: Any) -> ElicitationAnswer:
    """`{"action": "accept", "content": {...}}`, `{"action": "decline"}` or
    `{"action": "cancel"}`. Content values of other types are dropped. An action we do not
    know (an extension's `_…`, a future one) is not read as one we know: nothing the user
    gave can be used, so it counts as dismissed (cancel), and is logged."""
    action = result.get("action") if isinstance(result, dict) else None
    if action == ElicitationAction.ACCEPT:
        content = result.get("content")
        given = content if isinstance(content, dict) else {}
        kept = {str(k): v for k, v in given.items() if _value(v)}
        return ElicitationAnswer(action=ElicitationAction.ACCEPT, content=kept)
    if action in (ElicitationAction.DECLINE, ElicitationAction.CANCEL):
        return ElicitationAnswer(action=ElicitationAction(action))
    log.warning("elicitation answer %.200r has no action we know; read as cancel", result)
    return ElicitationAnswer(action=ElicitationAction.CANCEL)


class AcpElicitor(Elicitor):
    def __init__(self, room: Attachments[Connection]) -> None:
        self._room = room

    def can_ask(self, session_id: str, mode: ElicitationMode) -> bool:
        controller = self._room.controller_of(session_id)
        return controller is not None and advertised(controller.client_capabilities, mode)

    async def ask(self, session_id: str, elicitation: Elicitation) -> ElicitationAnswer:
        eligible = can_show(elicitation.mode)
        if not any(eligible(client) for client in self._room.peers_of(session_id)):
            raise ElicitationUnavailable(
                f"no client of the session supports {elicitation.mode.value} elicitation"
            )
        question = ElicitationQuestion(session_id, elicitation)
        try:
            return await self._room.ask_some(question, eligible)
        except PermissionUnavailable as exc:
            raise ElicitationUnavailable(str(exc)) from exc

    async def complete(self, session_id: str, elicitation_id: str) -> None:
        eligible = can_show(ElicitationMode.URL)
        for client in self._room.live_peers(session_id):
            if eligible(client):
                await client.send_notification(COMPLETE, {"elicitationId": elicitation_id})
