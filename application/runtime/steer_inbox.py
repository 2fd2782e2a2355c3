"""The steering inbox of one running turn: messages that wait for its next safe point.

A turn takes what waits between model requests (never inside a tool-use/tool-result pair)
and closes the inbox, in one step with no await, when it decides to stop: a message offered
before that step is taken by the turn, one offered after it finds the inbox closed. So a
message racing the end of a turn is either delivered or told plainly that it was not.
"""

import asyncio
from dataclasses import dataclass, field

from domain.content import UserInputBlock


@dataclass(slots=True, eq=False)
class PendingSteer:
    content: tuple[UserInputBlock, ...]
    # The id of the user message it was stored as; None: the turn ended without it.
    delivered: asyncio.Future[str | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


@dataclass(slots=True)
class SteerInbox:
    _waiting: list[PendingSteer] = field(default_factory=list)
    _closed: bool = False

    def offer(self, content: tuple[UserInputBlock, ...]) -> PendingSteer | None:
        """Leave a message for the turn; None when the turn takes no more."""
        if self._closed:
            return None
        steer = PendingSteer(content)
        self._waiting.append(steer)
        return steer

    def take(self) -> list[PendingSteer]:
        """What waits, oldest first; the turn delivers each and calls `delivered`."""
        taken, self._waiting = self._waiting, []
        return taken

    @property
    def waiting(self) -> bool:
        return bool(self._waiting)

    @property
    def count(self) -> int:
        return len(self._waiting)

    def close(self) -> None:
        """The turn takes no more: whatever still waits is told it was not delivered."""
        self._closed = True
        for steer in self.take():
            if not steer.delivered.done():
                steer.delivered.set_result(None)

    @property
    def closed(self) -> bool:
        return self._closed
