"""The control of one running turn: its cancellation, its end, the steering messages that
wait for its next safe point."""

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from application.runtime.steer_inbox import SteerInbox

T = TypeVar("T")


class TurnCancelled(Exception):
    """The client cancelled the turn while the awaited step was running."""


@dataclass(slots=True)
class TurnControl:
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    # Tool calls shown while the model was still writing them, not yet taken up by the
    # tool phase (which then updates them instead of showing them again).
    announced: set[str] = field(default_factory=set)
    # Set once the turn has begun for sure (its lease taken, not cancelled: Prompt): a
    # steering message that started it is answered then, not when the turn ends.
    started: asyncio.Event = field(default_factory=asyncio.Event)
    # Messages sent while it runs (`_session/steering`), for its next safe point.
    steers: SteerInbox = field(default_factory=SteerInbox)

    async def guard(self, step: Awaitable[T]) -> T:
        """Await `step`, or abandon it the moment the turn is cancelled."""
        if self.cancelled.is_set():
            if asyncio.iscoroutine(step):
                step.close()
            raise TurnCancelled
        work = asyncio.ensure_future(step)
        stop = asyncio.ensure_future(self.cancelled.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if work.cancelled():
            raise TurnCancelled
        return work.result()
