"""A fake of the Elicitor port: which modes the session's client shows, and the answers a
test scripts (an answer, an exception to raise, or an event to wait on before cancel)."""

import asyncio
from dataclasses import dataclass, field

from application.ports.elicitation import (
    Elicitation,
    ElicitationAnswer,
    ElicitationMode,
    Elicitor,
)

Scripted = ElicitationAnswer | Exception | asyncio.Event


@dataclass
class FakeElicitor(Elicitor):
    modes: set[ElicitationMode] = field(default_factory=lambda: {ElicitationMode.FORM})
    answers: list[Scripted] = field(default_factory=list)
    asked: list[tuple[str, Elicitation]] = field(default_factory=list)
    completed: list[tuple[str, str]] = field(default_factory=list)
    withdrawn: int = 0  # questions abandoned while pending (the turn cancelled, timed out)
    pending: asyncio.Event = field(default_factory=asyncio.Event)  # one is being asked

    def can_ask(self, session_id: str, mode: ElicitationMode) -> bool:
        return mode in self.modes

    async def ask(self, session_id: str, elicitation: Elicitation) -> ElicitationAnswer:
        self.asked.append((session_id, elicitation))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, asyncio.Event):
            self.pending.set()
            try:
                await answer.wait()
            except asyncio.CancelledError:
                self.withdrawn += 1
                raise
            raise AssertionError("a waiting answer is only ever abandoned")
        return answer

    async def complete(self, session_id: str, elicitation_id: str) -> None:
        self.completed.append((session_id, elicitation_id))
