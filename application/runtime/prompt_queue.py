"""Prompts held behind a session's running turn (for clients that queue), first in, first
out. When the turn ends, the session is handed to the oldest at once (ActiveSession), so
nothing else can begin a turn in between: the queue keeps its order."""

import asyncio
from collections import deque
from dataclasses import dataclass, field

from application.runtime.turn_control import TurnControl


@dataclass(slots=True, eq=False)
class QueuedPrompt:
    id: str
    preview: str  # its first words, for whoever shows the queue
    queued_by: str  # the client that sent it, as it named itself
    control: TurnControl  # its turn's, made as it was received
    # True: its turn now (the session is reserved for it); False: withdrawn or dropped.
    ready: "asyncio.Future[bool]" = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class PromptQueue:
    def __init__(self) -> None:
        self._waiting: deque[QueuedPrompt] = deque()

    def add(self, entry: QueuedPrompt) -> None:
        self._waiting.append(entry)

    def next(self) -> QueuedPrompt | None:
        """The oldest, told that its turn has come."""
        while self._waiting:
            entry = self._waiting.popleft()
            if not entry.ready.done():
                entry.ready.set_result(True)
                return entry
        return None

    def withdraw(self, entry: QueuedPrompt) -> bool:
        """Out of the queue, told it will not run; False when it was not waiting."""
        if entry not in self._waiting:
            return False
        self._waiting.remove(entry)
        if not entry.ready.done():
            entry.ready.set_result(False)
        return True

    def clear(self) -> list[QueuedPrompt]:
        dropped = list(self._waiting)
        for entry in dropped:
            self.withdraw(entry)
        return dropped

    @property
    def entries(self) -> tuple[QueuedPrompt, ...]:
        return tuple(self._waiting)

    def __len__(self) -> int:
        return len(self._waiting)
