"""Queueing: a prompt sent while a turn runs waits its turn instead of being refused (for
clients that asked for it), first in, first out, visible to every attached client."""

import asyncio
import itertools
from typing import Any

from application.errors import SessionBusy
from application.ports.event_sink import EventSink
from application.runtime.prompt_queue import QueuedPrompt
from application.runtime.registry import ActiveSession, SessionRegistry
from application.runtime.turn_control import TurnControl
from domain.content import UserInputBlock, plain_text
from domain.events import PromptQueueChanged, QueuedPromptShown
from domain.ids import SessionId

DEFAULT_QUEUE_MAX = 8
PREVIEW_WORDS = 8
PREVIEW_CHARS = 80
_numbers = itertools.count(1)  # entry ids, unique in the process


class QueuePrompts:
    """- `holds`: a prompt sent now would wait (a turn runs or is reserved, or others wait).
    - `enqueue`: at most `max_waiting` per session; past it SessionBusy, with the length.
    - `wait_turn`: until the session is handed to it (ActiveSession.end_turn), or it is
      withdrawn, or its turn cancelled (its session closing).
    - `release`: a reserved turn that never began passes the session on.
    Every change of a queue is shown to the session's clients (PromptQueueChanged)."""

    def __init__(
        self, *, registry: SessionRegistry, sink: EventSink, max_waiting: int = DEFAULT_QUEUE_MAX
    ) -> None:
        self._registry = registry
        self._sink = sink
        self._max = max_waiting

    def reserve(self, session_id: str, control: TurnControl) -> bool:
        """At a prompt's receipt, in arrival order: an idle session open here is kept for
        it (ActiveSession.reserve), so a prompt received after it waits behind it (or is
        refused busy) whatever each one awaits before its turn begins. Undone by
        `release` if that prompt never begins its turn."""
        active = self._registry.find(session_id)
        return active is not None and active.reserve(control)

    def holds(self, session_id: str) -> bool:
        active = self._registry.find(session_id)
        return active is not None and (active.busy or len(active.queue) > 0)

    async def enqueue(
        self,
        session_id: str,
        content: tuple[UserInputBlock, ...],
        control: TurnControl,
        queued_by: str,
    ) -> QueuedPrompt:
        active = self._registry.require(session_id)
        if len(active.queue) >= self._max:
            raise SessionBusy(
                f"A prompt is running in this session and {len(active.queue)} wait behind "
                f"it, the most it holds (IAC_CODE_PROMPT_QUEUE_MAX={self._max}).",
                sessionId=session_id,
                queueLength=len(active.queue),
                queueMax=self._max,
            )
        entry = QueuedPrompt(
            id=f"queued_{next(_numbers)}",
            preview=preview(content),
            queued_by=queued_by,
            control=control,
        )
        active.queue.add(entry)
        await self._changed(active)
        return entry

    async def wait_turn(self, session_id: str, entry: QueuedPrompt) -> bool:
        """True: the session is reserved for it now. False: it will not run."""
        cancelled = asyncio.ensure_future(entry.control.cancelled.wait())
        try:
            either: set[asyncio.Future[Any]] = {entry.ready, cancelled}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        active = self._registry.find(session_id)
        if not entry.ready.done():  # cancelled while it waited (its session closing)
            if active is not None:
                active.queue.withdraw(entry)
            if not entry.ready.done():
                entry.ready.set_result(False)
        if active is not None:
            await self._changed(active)  # it left the queue
        return entry.ready.result()

    async def withdraw(self, session_id: str, entry: QueuedPrompt) -> bool:
        active = self._registry.find(session_id)
        if active is None or not active.queue.withdraw(entry):
            return False
        await self._changed(active)
        return True

    async def clear(self, session_id: str) -> int:
        active = self._registry.find(session_id)
        if active is None:
            return 0
        dropped = active.queue.clear()
        if dropped:
            await self._changed(active)
        return len(dropped)

    def entries(self, session_id: str) -> tuple[QueuedPrompt, ...]:
        active = self._registry.find(session_id)
        return active.queue.entries if active is not None else ()

    def release(self, session_id: str, control: TurnControl) -> None:
        """After its prompt returned: a session still reserved for it (it never began: no
        key, cancelled as it came up) goes to the next."""
        active = self._registry.find(session_id)
        if active is not None and active.turn is control:
            active.end_turn(control)

    async def show_empty(self, session_id: str) -> None:
        """Every client is shown an empty queue (one lost with the process that held it)."""
        await self._sink.emit(SessionId(session_id), PromptQueueChanged(entries=()))

    async def _changed(self, active: ActiveSession) -> None:
        shown = tuple(
            QueuedPromptShown(id=e.id, preview=e.preview, queued_by=e.queued_by)
            for e in active.queue.entries
        )
        await self._sink.emit(SessionId(active.session.id), PromptQueueChanged(entries=shown))


def preview(content: tuple[UserInputBlock, ...]) -> str:
    words = plain_text(content).split()
    shown = " ".join(words[:PREVIEW_WORDS])
    if len(shown) > PREVIEW_CHARS:
        shown = shown[: PREVIEW_CHARS - 1] + "…"
    elif len(words) > PREVIEW_WORDS:
        shown += " …"
    return shown
