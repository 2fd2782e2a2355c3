"""Steering: the user speaks while the agent works, without cancelling it."""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from application.errors import SessionBusy
from application.ports.event_sink import EventSink
from application.runtime.registry import ActiveSession, SessionRegistry
from application.runtime.turn_control import TurnControl
from application.turn.prompt import PromptRequest
from domain.content import UserInputBlock
from domain.events import SteeringWaiting
from domain.ids import SessionId
from domain.steering import IdleBehavior, SteerOutcome, SteerResult

# Runs a prompt for the message in a task of its own (the caller's: a turn begun for a
# client runs inside the room, as a prompt does); the task ends when the turn does.
StartTurn = Callable[[PromptRequest], "asyncio.Future[Any]"]

CANCELLED_BEFORE_DELIVERY = "The turn was cancelled before the message could be delivered."
IDLE_REFUSED = "No turn is running in this session (idleBehavior: fail)."
NOT_STARTED = "The turn for the message was cancelled before it began."


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerRequest:
    session_id: str
    content: tuple[UserInputBlock, ...]
    idle: IdleBehavior = IdleBehavior.START_NEW_TURN


class SteerSession:
    """Deliver a message into the running turn, or begin the next turn with it.

    - A turn running here takes it at its next safe point (ModelTurn): answered INJECTED
      once it is stored, with the id of the user message it became.
    - A turn that ends without taking it (it stopped meanwhile, or was past its last
      request) hands it on: once that turn is over, the message begins the next one.
      A turn cancelled meanwhile: FAILED, the user stopped the work it was meant for.
    - No turn: `idle` decides, START_NEW_TURN (answered once the turn has begun) or FAIL.
    - Never delivered twice, never dropped: every path ends in one truthful answer.
    """

    def __init__(self, *, registry: SessionRegistry, sink: EventSink) -> None:
        self._registry = registry
        self._sink = sink

    async def execute(self, request: SteerRequest, start: StartTurn) -> SteerResult:
        while True:
            active = self._registry.require(request.session_id)
            control = active.turn
            if control is not None:
                delivered = await self._into(control, request)
                if delivered is not None:
                    return delivered
                await control.finished.wait()  # it ended without the message: the next
            elif request.idle is IdleBehavior.FAIL:
                return SteerResult(outcome=SteerOutcome.FAILED, reason=IDLE_REFUSED)
            elif (began := await self._begin(active, request, start)) is not None:
                return began

    async def _into(self, control: TurnControl, request: SteerRequest) -> SteerResult | None:
        """Into the running turn; None when it ended without taking the message."""
        steer = control.steers.offer(request.content)
        if steer is None:
            return None
        waiting = SteeringWaiting(waiting=control.steers.count)
        await self._sink.emit(SessionId(request.session_id), waiting)
        message_id = await steer.delivered
        if message_id is not None:
            return SteerResult(outcome=SteerOutcome.INJECTED, message_id=message_id)
        if control.cancelled.is_set():
            return SteerResult(outcome=SteerOutcome.FAILED, reason=CANCELLED_BEFORE_DELIVERY)
        return None

    @staticmethod
    async def _begin(
        active: ActiveSession, request: SteerRequest, start: StartTurn
    ) -> SteerResult | None:
        """A turn with the message as its prompt; None when another turn began here first
        (the message then goes into that one)."""
        control = TurnControl()
        turn = start(
            PromptRequest(session_id=request.session_id, content=request.content, control=control)
        )
        began = asyncio.ensure_future(control.started.wait())
        try:
            await asyncio.wait({turn, began}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            began.cancel()
        if control.started.is_set():
            return SteerResult(outcome=SteerOutcome.STARTED_NEW_TURN)
        if turn.cancelled():
            return SteerResult(outcome=SteerOutcome.FAILED, reason=NOT_STARTED)
        error = turn.exception()  # refused before it began (done: `began` never came)
        if isinstance(error, SessionBusy) and active.turn is not None:
            return None
        if error is not None:
            raise error
        return SteerResult(outcome=SteerOutcome.FAILED, reason=NOT_STARTED)
