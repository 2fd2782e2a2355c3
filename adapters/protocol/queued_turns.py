"""Prompts that wait behind a running turn (clients that queue), from the protocol's side:
each waits and runs in a task of its own, so its client may go away (it only detaches; the
prompt still runs, its answer goes nowhere) unless it withdrew it first."""

import asyncio
from collections.abc import Callable
from typing import Any

from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal
from adapters.protocol.received import ReceivedPrompt
from adapters.protocol.use_cases import UseCases
from application.attachments.room import Attachments
from application.commands.queue import queue_report
from application.dto import PromptResult
from application.notices.telling import Severity
from application.runtime.turn_control import TurnControl
from application.turn.prompt import PromptRequest
from domain.content import UserInputBlock
from domain.stop_reason import StopReason
from domain.usage import Usage

Keep = Callable[["asyncio.Future[Any]"], None]  # hold a turn's task until it is done


class QueuedTurns:
    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments[Connection],
        keep: Keep,
        journal: UpdateJournal | None = None,
    ) -> None:
        self._uc = use_cases
        self._room = room
        self._keep = keep
        self._journal = journal

    async def run(
        self, peer: Connection, received: ReceivedPrompt, content: tuple[UserInputBlock, ...]
    ) -> PromptResult:
        """Queue it (SessionBusy when the queue is full) and answer once it has run."""
        sid = received.session_id
        entry = await self._uc.queue().enqueue(
            sid, content, received.control, queued_by=peer.client_name or "a client"
        )
        received.queued = entry
        turn = asyncio.ensure_future(self._wait_and_run(peer, received, content))
        self._keep(turn)
        with self._room.waiting(peer):
            return await asyncio.shield(turn)

    async def run_routed(
        self, session_id: str, content: tuple[UserInputBlock, ...], queued_by: str
    ) -> PromptResult | None:
        """A queueing client's prompt that another replica routed here, where the session's
        turn runs: it waits its turn in this queue, then runs (its client is attached
        there, not here: no hand-over of control). None: no turn runs here any more, the
        sender's replica runs it itself."""
        queue = self._uc.queue()
        if not queue.holds(session_id):
            return None
        control = TurnControl()
        entry = await queue.enqueue(session_id, content, control, queued_by=queued_by)
        if not await queue.wait_turn(session_id, entry):
            return PromptResult(stop_reason=StopReason.CANCELLED, usage=Usage())
        request = PromptRequest(session_id=session_id, content=content, control=control)
        try:
            return await self._uc.prompt().execute(request)
        finally:
            queue.release(session_id, control)
            if self._journal is not None:
                self._journal.flush_soon()

    def withdraw(self, received: ReceivedPrompt) -> bool:
        """`$/cancel_request` of a prompt still waiting: it leaves the queue and answers
        `cancelled`. False when it no longer waits (it runs: cancelled as a turn)."""
        entry = received.queued
        if entry is None or entry.ready.done():
            return False
        received.control.cancelled.set()  # its waiter takes it out, and tells everyone
        return True

    async def command(self, session_id: str, argument: str) -> PromptResult:
        """`/queue [clear]` while a turn runs: answered beside it, not stored."""
        report = await queue_report(self._uc.queue(), session_id, argument)
        await self._uc.tell()(session_id, Severity.INFO, "queue", report)
        return PromptResult(stop_reason=StopReason.END_TURN, usage=Usage())

    async def _wait_and_run(
        self, peer: Connection, received: ReceivedPrompt, content: tuple[UserInputBlock, ...]
    ) -> PromptResult:
        sid, queue, entry = received.session_id, self._uc.queue(), received.queued
        assert entry is not None
        if not await queue.wait_turn(sid, entry):
            return PromptResult(stop_reason=StopReason.CANCELLED, usage=Usage())
        received.queued = None  # running now: `session/cancel` applies to it
        request = PromptRequest(session_id=sid, content=content, control=received.control)
        try:
            async with self._room.prompting(sid, peer):
                return await self._uc.prompt().execute(request)
        finally:
            queue.release(sid, received.control)
            if self._journal is not None:  # the turn's last updates: written now
                self._journal.flush_soon()
