"""Steering: a message the user sends while the agent works, and what became of it."""

from dataclasses import dataclass
from enum import StrEnum


class SteerOutcome(StrEnum):
    """What a steering message became (the wire's `outcome`)."""

    INJECTED = "injected"  # delivered into the running turn, at its next safe point
    STARTED_NEW_TURN = "startedNewTurn"  # no turn could take it: it began the next one
    FAILED = "failed"  # neither: `reason` says why


class IdleBehavior(StrEnum):
    """What a steering message does when no turn is running to take it."""

    START_NEW_TURN = "startNewTurn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerResult:
    outcome: SteerOutcome
    message_id: str | None = None  # the stored user message (injected, or the new turn's)
    reason: str | None = None  # why it failed
