"""An MCP server's own elicitation requests, forwarded to the clients of its session."""

import asyncio
import logging

from application.ports.elicitation import (
    Elicitation,
    ElicitationAnswer,
    ElicitationUnavailable,
    Elicitor,
)
from application.ports.mcp import McpElicitations
from application.runtime.registry import ActiveSession
from application.runtime.turn_control import TurnCancelled
from domain.questions import ElicitationAction

log = logging.getLogger(__name__)

DECLINED = ElicitationAnswer(action=ElicitationAction.DECLINE)
CANCELLED = ElicitationAnswer(action=ElicitationAction.CANCEL)


class SessionElicitations(McpElicitations):
    """What one session's MCP servers ask its user, asked as the model's questions are.

    - No client of the session can show the mode asked for (form, or url for a browser
      step): declined, as a client without elicitation would.
    - Nobody answering within `timeout` seconds, or the session's turn being cancelled
      meanwhile: cancelled (the question is withdrawn from the clients).
    """

    def __init__(self, *, elicitor: Elicitor, active: ActiveSession, timeout: float) -> None:
        self._elicitor = elicitor
        self._active = active
        self._timeout = timeout

    async def ask(self, elicitation: Elicitation) -> ElicitationAnswer:
        session_id = self._active.session.id
        asking = asyncio.wait_for(self._elicitor.ask(session_id, elicitation), self._timeout)
        turn = self._active.turn
        try:
            return await (turn.guard(asking) if turn is not None else asking)
        except ElicitationUnavailable as exc:
            log.info("an MCP server's elicitation in %s is declined: %s", session_id, exc)
            return DECLINED
        except (TimeoutError, TurnCancelled):
            return CANCELLED

    async def complete(self, elicitation_id: str) -> None:
        await self._elicitor.complete(self._active.session.id, elicitation_id)
