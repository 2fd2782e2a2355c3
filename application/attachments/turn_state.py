"""A session's turn as a client is told it: a newly attached one on its first update, a
reconnecting one (after a restart, perhaps on another replica) before what it missed."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from application.ports.leases import TurnLeases
from domain.ids import SessionId

log = logging.getLogger(__name__)


class TurnPhase(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    AWAITING_PERMISSION = "awaiting_permission"


@dataclass(frozen=True, slots=True)
class TurnState:
    phase: TurnPhase
    tool_call_id: str | None = None  # awaiting permission: for which tool call


class TurnStates:
    """A session's turn as a reconnecting client should see it: running here (or waiting
    for a permission answer), running on another replica (its lease is live), or idle. A
    turn that ran in a process that stopped is gone: idle."""

    def __init__(
        self,
        *,
        busy: Callable[[str], bool],
        awaiting: Callable[[str], bool],
        holder_elsewhere: Callable[[str], Awaitable[bool]],
    ) -> None:
        self._busy = busy
        self._awaiting = awaiting
        self._elsewhere = holder_elsewhere

    async def __call__(self, session_id: str) -> str:
        if self._busy(session_id):
            waits = self._awaiting(session_id)
            return (TurnPhase.AWAITING_PERMISSION if waits else TurnPhase.RUNNING).value
        try:
            elsewhere = await self._elsewhere(session_id)
        except Exception as exc:  # the database is out: say what is known here
            log.warning("turn state of %s: lease not readable: %s", session_id, exc)
            return TurnPhase.IDLE.value
        return (TurnPhase.RUNNING if elsewhere else TurnPhase.IDLE).value


def held_elsewhere(
    leases: TurnLeases, now: Callable[[], datetime], holder: str
) -> Callable[[str], Awaitable[bool]]:
    """Whether another process holds a live lease on the session's turn (PostgreSQL)."""

    async def check(session_id: str) -> bool:
        live = await leases.live_holder(SessionId(session_id), now())
        return live is not None and live != holder

    return check
