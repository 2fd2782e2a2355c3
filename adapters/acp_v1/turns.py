"""The methods that run turns: `session/prompt` (queued behind a running turn for a client
that asks, here or on the replica running it), `_session/steering` (into the running turn,
or the next turn's prompt) and `_iac_code/session/edit_prompt` (a rewind, then the new
prompt, as one), and the holder's side of a steering message or a queued prompt another
replica routed here.

A turn runs in a task of its own: the connection that asked may go away (it only
detaches), the turn goes on for the clients still attached."""

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from acp import schema as acp

from adapters.acp_v1 import results
from adapters.acp_v1.attachments import prompt_content
from adapters.acp_v1.params import check_prompt
from adapters.acp_v1.queueing import queue_command, queues_prompts
from adapters.acp_v1.requests import EditPromptParams, SteeringParams
from adapters.acp_v1.wire import AcpPromptBlock
from adapters.protocol.connection import Connection
from adapters.protocol.dispatch import Call
from adapters.protocol.journal import UpdateJournal
from adapters.protocol.queued_turns import QueuedTurns
from adapters.protocol.received import ReceivedPrompt, ReceivedPrompts
from adapters.protocol.replicas import NOT_ROUTED, HandBack, Replicas
from adapters.protocol.use_cases import UseCases
from application.attachments.room import Attachments
from application.dto import PromptResult
from application.turn.prompt import PromptRequest
from application.turn.steering import SteerRequest
from domain.content import UserInputBlock


async def routed_to_holder(
    use_cases: UseCases, replicas: Replicas, call: Call, session_id: str
) -> Any:
    """The outcome of the request from the replica running the session's turn, if another
    one runs it; NOT_ROUTED when it is this replica's to apply (its turn runs here or
    nowhere, or the other replica handed it back)."""
    if use_cases.queue().holds(session_id):
        return NOT_ROUTED  # the turn runs here: no read needed
    return await replicas.to_holder(session_id, call.method, call.params or {})


class TurnMethods:
    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments[Connection],
        replicas: Replicas,
        received: ReceivedPrompts,
        *,
        journal: UpdateJournal | None,
        max_image_bytes: int,
    ) -> None:
        self._uc = use_cases
        self._room = room
        self._replicas = replicas
        self._received = received
        self._journal = journal
        self._max_image_bytes = max_image_bytes
        self._turns: set[asyncio.Future[Any]] = set()  # prompts, outliving their connection
        self.queued = QueuedTurns(use_cases, room, self._keep, journal)

    async def prompt(
        self, request: acp.PromptRequest, call: Call, received: ReceivedPrompt | None = None
    ) -> Any:
        check_prompt(request.prompt)
        session_id, peer = request.session_id, call.peer
        self._room.check_may_act(session_id, peer)
        content = await self._content(request.prompt)
        if received is not None and received.reserved:
            # The session was kept for it as it was read: its turn, here (unless it runs
            # on another replica, where a client that queues waits in that one's queue).
            if queues_prompts(peer.client_capabilities):
                routed = await self._queue_elsewhere(received, call)
                if routed is not NOT_ROUTED:
                    return routed
        elif received is not None and self._uc.queue().holds(session_id):
            # A turn runs (or others wait): `/queue` answers beside it; a client that
            # queues waits its turn; anyone else is refused busy by the turn, as before.
            if (argument := queue_command(content)) is not None:
                return results.prompt_result(await self.queued.command(session_id, argument))
            if queues_prompts(peer.client_capabilities) and self._uc.queue().holds(session_id):
                return results.prompt_result(await self.queued.run(peer, received, content))
        elif received is not None and queues_prompts(peer.client_capabilities):
            # The turn may run on another replica: the prompt waits in the queue there.
            routed = await self._queue_elsewhere(received, call)
            if routed is not NOT_ROUTED:
                return routed
        control = received.control if received is not None else None
        turn = PromptRequest(session_id=session_id, content=content, control=control)
        reserved = received is not None and received.reserved
        async with self._room.prompting(session_id, peer, reserved=reserved):
            result = await self._run_turn(peer, self._reserved_turn(turn, received))
        return results.prompt_result(result)

    def reserve(self, received: ReceivedPrompt, peer: Connection) -> None:
        """As the prompt is read, in arrival order: an idle session is kept for it, for a
        client that queues (the prompts it writes behind it wait their turn). Others' are
        taken as before: the first to begin its turn runs, the rest are refused busy."""
        if not received.late and queues_prompts(peer.client_capabilities):
            received.reserved = self._uc.queue().reserve(received.session_id, received.control)

    def unreserve(self, received: ReceivedPrompt) -> None:
        """A prompt answered without its turn taking the session kept for it (refused,
        routed to another replica, failed before it began): the session goes on to the
        next prompt waiting, or is idle again."""
        if received.reserved:
            received.reserved = False
            self._uc.queue().release(received.session_id, received.control)

    async def _reserved_turn(
        self, request: PromptRequest, received: ReceivedPrompt | None
    ) -> PromptResult:
        """The turn, which has the session kept for its prompt from now on, and passes it
        on however it ends (one that ends before it began leaves it reserved otherwise)."""
        if received is not None:
            received.reserved = False
        try:
            return await self._uc.prompt().execute(request)
        finally:
            if request.control is not None:
                self._uc.queue().release(request.session_id, request.control)

    async def _queue_elsewhere(self, received: ReceivedPrompt, call: Call) -> Any:
        """A queueing client's prompt while another replica runs the session's turn: it
        waits in that replica's queue and runs there; NOT_ROUTED when no turn runs
        elsewhere (or the holder handed it back: its turn ended meanwhile)."""
        queued = {"prompt": call.params, "queuedBy": call.peer.client_name or "a client"}

        def routed() -> None:
            self._received.answered(received)  # a session/cancel now is for the running turn

        return await self._replicas.queue_on_holder(received.session_id, queued, routed)

    async def steer(self, request: SteeringParams, call: Call) -> Any:
        """A message into the running turn, or (no turn) the next turn's prompt. Any client
        that may act on the session may steer; a turn it begins makes it the controller,
        as a prompt would (application.attachments.ownership)."""
        check_prompt(request.prompt)
        session_id, peer = request.session_id, call.peer
        self._room.check_may_act(session_id, peer)
        routed = await routed_to_holder(self._uc, self._replicas, call, session_id)
        if routed is not NOT_ROUTED:
            return routed
        content = await self._content(request.prompt)
        steer = SteerRequest(session_id=session_id, content=content, idle=request.idle_behavior)
        result = await self._uc.steer().execute(steer, lambda turn: self._begin_turn(peer, turn))
        return results.steering_result(result)

    async def edit_prompt(self, request: EditPromptParams, call: Call) -> Any:
        """A rewind to the prompt `messageId`, then the new prompt on the cut history, as
        one operation: no other prompt comes between them. Answered as session/prompt."""
        check_prompt(request.prompt)
        session_id, peer = request.session_id, call.peer
        self._room.check_may_act(session_id, peer)
        content = await self._content(request.prompt)
        files = request.restore_files()
        async with self._room.prompting(session_id, peer):
            edit = self._uc.edit_prompt().execute(
                session_id, request.message_id, content, files=files
            )
            result = await self._run_turn(peer, edit)
        return results.prompt_result(result)

    # -- the holder's side: what another replica routed here ------------------------------

    async def apply_steer(self, request: SteeringParams) -> Any:
        """Into the turn running here; a message it ended without goes back to its sender
        (HandBack), whose replica begins the next turn with it for its client."""
        check_prompt(request.prompt)
        content = await self._content(request.prompt)
        idle = request.idle_behavior
        steer = SteerRequest(session_id=request.session_id, content=content, idle=idle)
        result = await self._uc.steer().execute(steer, _hand_back)
        return results.steering_result(result)

    async def apply_queued(self, request: acp.PromptRequest, queued_by: str) -> Any:
        """A queueing client's prompt from another replica: it waits in this turn's queue
        and runs here; the turn ended meanwhile, it goes back (HandBack)."""
        content = await self._content(request.prompt)
        turn = asyncio.ensure_future(self.queued.run_routed(request.session_id, content, queued_by))
        self._keep(turn)  # it runs on should the routing wait be cancelled
        result = await asyncio.shield(turn)
        if result is None:
            raise HandBack
        return results.prompt_result(result)

    # -- running a turn ---------------------------------------------------------------------

    async def _content(self, blocks: Sequence[AcpPromptBlock]) -> tuple[UserInputBlock, ...]:
        return await prompt_content(blocks, max_image_bytes=self._max_image_bytes)

    async def _run_turn(self, peer: Connection, work: Coroutine[Any, Any, PromptResult]) -> Any:
        """Run the turn in its own task: the connection that asked may go away (it only
        detaches), the turn goes on for the clients still attached."""
        turn = asyncio.ensure_future(work)
        self._keep(turn)
        if self._journal is not None:  # the turn's last updates: written now, not later
            journal = self._journal
            turn.add_done_callback(lambda _: journal.flush_soon())
        with self._room.waiting(peer):
            return await asyncio.shield(turn)

    def _begin_turn(self, peer: Connection, request: PromptRequest) -> "asyncio.Future[Any]":
        """A turn a steering message begins: a prompt whose answer has nowhere to go (the
        steering request is answered once it has begun)."""

        async def prompted() -> Any:
            async with self._room.prompting(request.session_id, peer):
                return await self._run_turn(peer, self._uc.prompt().execute(request))

        task = asyncio.ensure_future(prompted())
        self._keep(task)
        return task

    def _keep(self, turn: "asyncio.Future[Any]") -> None:
        """Hold a turn's task until it is done (it may outlive the request that began it)."""
        self._turns.add(turn)
        turn.add_done_callback(_forget_turn(self._turns))


def _hand_back(request: PromptRequest) -> "asyncio.Future[Any]":
    """No turn here for a routed steering message: its sender's replica begins one."""
    handed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    handed.set_exception(HandBack())
    return handed


def _forget_turn(turns: set["asyncio.Future[Any]"]) -> Callable[["asyncio.Future[Any]"], None]:
    def done(turn: "asyncio.Future[Any]") -> None:
        turns.discard(turn)
        if not turn.cancelled():
            turn.exception()  # retrieved: the handler that awaited it may be gone

    return done
