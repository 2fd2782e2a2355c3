"""Prompts received and not yet answered, by session: each one's turn control exists from
the moment its request is read, so a `session/cancel` or `session/close` read right behind
it (in the same write, before its turn had a chance to begin) still applies to it."""

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from application.runtime.prompt_queue import QueuedPrompt
from application.runtime.turn_control import TurnControl


@dataclass(slots=True)
class ReceivedPrompt:
    session_id: str
    control: TurnControl = field(default_factory=TurnControl)
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    late: bool = False  # read while its session was being closed: it is refused
    params: dict[str, Any] | None = None  # as read: a `$/cancel_request` names the request
    # Waiting behind the running turn (a client that queues): `session/cancel` is for the
    # running turn only, and leaves it waiting.
    queued: QueuedPrompt | None = None
    # The session was kept for it as it was read (idle then): a prompt read after it
    # finds the session busy. False again once its turn has it, or it let it go.
    reserved: bool = False


class ReceivedPrompts:
    def __init__(self) -> None:
        self._by_session: dict[str, list[ReceivedPrompt]] = {}
        self._closing: collections.Counter[str] = collections.Counter()

    def receive(self, session_id: str, params: dict[str, Any] | None = None) -> ReceivedPrompt:
        """Synchronous, called as the request is read, in arrival order."""
        late = self._closing[session_id] > 0
        received = ReceivedPrompt(session_id, late=late, params=params)
        self._by_session.setdefault(session_id, []).append(received)
        return received

    def answered(self, received: ReceivedPrompt) -> None:
        received.answered.set()
        waiting = self._by_session.get(received.session_id, [])
        with contextlib.suppress(ValueError):
            waiting.remove(received)
        if not waiting:
            self._by_session.pop(received.session_id, None)

    def cancel(self, session_id: str, *, queued_too: bool = False) -> bool:
        """Every prompt of the session received so far stops (or never starts): it answers
        `cancelled`; one waiting in the queue only when `queued_too` (the session closing).
        False: none was received here."""
        waiting = self._by_session.get(session_id, [])
        for received in waiting:
            if received.queued is None or queued_too:
                received.control.cancelled.set()
        return bool(waiting)

    def find(self, session_id: str, params: dict[str, Any] | None) -> ReceivedPrompt | None:
        """The prompt read with exactly these params (the same object) in the session."""
        for received in self._by_session.get(session_id, []):
            if params is not None and received.params is params:
                return received
        return None

    @contextlib.asynccontextmanager
    async def closing(self, session_id: str, bound: float) -> AsyncIterator[None]:
        """The session is being closed: the prompts received so far are cancelled, and
        waited for (at most `bound` seconds) until each has answered, so that the close
        answers after them; those read from now until the close is done are late."""
        self._closing[session_id] += 1
        try:
            self.cancel(session_id, queued_too=True)
            earlier = [r.answered.wait() for r in self._by_session.get(session_id, [])]
            if earlier:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.gather(*earlier), bound)
            yield
        finally:
            self._closing[session_id] -= 1
            if not self._closing[session_id]:
                del self._closing[session_id]
