"""An MCP server's elicitation requests, read into our Elicitation and answered with what
the user said; its `notifications/elicitation/complete` passed on.

A url step of a server on MCP 2025-11-25 carries the server's id, and the server says when
the step is done. From MCP 2026-07-28 on the step has no id and no completion notice: the
server simply goes on once the call is retried. Such a step gets an id of ours, and is
told done when the tool call that asked for it returns."""

import logging
import uuid
from collections.abc import Callable

from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp_types import (
    ElicitCompleteNotification,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from application.ports.elicitation import Elicitation
from application.ports.mcp import McpElicitations
from domain.questions import ElicitationAction

logger = logging.getLogger(__name__)
_VALUES = (str, int, float, bool, list)  # what an MCP answer's content may hold


def elicitation_of(params: ElicitRequestParams, call_id: str | None) -> Elicitation:
    """The server's request as ours: a url step keeps the server's id (it names that id
    again when the step completes); one it left without an id gets one."""
    if isinstance(params, ElicitRequestURLParams):
        return Elicitation(
            message=params.message,
            url=params.url,
            elicitation_id=params.elicitation_id or f"el_{uuid.uuid4().hex}",
            tool_call_id=call_id,
        )
    return Elicitation(message=params.message, schema=params.requested_schema, tool_call_id=call_id)


class ServerElicitations:
    """The callbacks one server's MCP client is given. `call_id` says which tool call of
    the session the server is running (None between calls)."""

    def __init__(self, elicitations: McpElicitations, call_id: Callable[[], str | None]) -> None:
        self._elicitations = elicitations
        self._call_id = call_id
        self._steps: list[str] = []  # accepted url steps of ours, done when the call returns

    async def elicit(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        elicitation = elicitation_of(params, self._call_id())
        answer = await self._elicitations.ask(elicitation)
        ours = isinstance(params, ElicitRequestURLParams) and params.elicitation_id is None
        if ours and answer.action is ElicitationAction.ACCEPT and elicitation.elicitation_id:
            self._steps.append(elicitation.elicitation_id)
        if answer.action is ElicitationAction.DECLINE:
            return ElicitResult(action="decline")
        if answer.action is ElicitationAction.CANCEL:
            return ElicitResult(action="cancel")
        if elicitation.url is not None:  # a url step's consent: there is nothing to give
            return ElicitResult(action="accept")
        content = {k: v for k, v in answer.content.items() if isinstance(v, _VALUES)}
        return ElicitResult(action="accept", content=content)  # type: ignore[arg-type]

    async def call_returned(self) -> None:
        """The server answered the tool call: the url steps it asked for without an id of
        its own are done."""
        steps, self._steps = self._steps, []
        for step in steps:
            await self._elicitations.complete(step)

    async def message(self, message: IncomingMessage) -> None:
        if isinstance(message, ElicitCompleteNotification):
            await self._elicitations.complete(message.params.elicitation_id)
