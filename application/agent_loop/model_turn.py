"""The agent loop of one prompt turn: model requests and tool rounds until a stop reason."""

from application.agent_loop.context_room import ContextRoom
from application.agent_loop.parts import ModelSide, TurnOutput
from application.agent_loop.prepared import PreparedPrompt
from application.agent_loop.provider_retry import failure_notice
from application.agent_loop.reply_stream import ReplyStream
from application.dto import PromptResult
from application.errors import ContextOverflow, ModelError
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.tools.phase import ToolPhase
from domain.events import SteeringWaiting, UserContentReplayed
from domain.ids import MessageId
from domain.message import Message, Role
from domain.session import Session
from domain.stop_reason import ModelStop, StopReason
from domain.turn import Turn
from domain.usage import Usage


class ModelTurn:
    """Runs a prepared prompt through the model until it stops.

    - Every message is committed as it completes, in its own short transaction; no
      transaction is open while the model streams.
    - Before each model request the context is made room in (ContextRoom). A request the
      provider refuses as too long is compacted and retried once.
    - Cancellation ends the turn with CANCELLED; what the user saw of the reply is kept.
    - A provider failure is shown to the user as an error notice (or the agent-text line it
      was before notices), then raised as ModelError; the
      turn's usage is recorded whatever happens.
    - Tool uses run in order through the ToolPhase (permissions included); their results
      are committed before the next model call. On the turn's last allowed request they
      are not run.
    - Steering messages (control.steers) are delivered before each model request: after
      the prompt, a finished reply or the tool results, never between a tool use and its
      result. Each is stored as a user message and shown to every client. A message that
      waits when the model ends its turn keeps the turn going; the inbox closes in the same
      step as the turn decides to stop, so a later one is told it was not taken.
    """

    def __init__(
        self,
        *,
        model: ModelSide,
        output: TurnOutput,
        tools: ToolPhase,
        room: ContextRoom,
        replies: ReplyStream,
    ) -> None:
        self._model = model
        self._output = output
        self._tools = tools
        self._room = room
        self._replies = replies

    def has_credentials(self) -> bool:
        """Whether the model can be asked at all (a slash command does not need it)."""
        return self._model.llm.has_credentials()

    async def run(
        self, session: Session, control: TurnControl, prompt: PreparedPrompt
    ) -> PromptResult:
        out = self._output
        limits = self._model.requests.limits
        turn = Turn(started_at=out.clock.now(), max_requests=limits.max_turn_requests)
        # The thought level holds for the whole turn: the provider requires every assistant
        # message of a tool loop to start with thinking once thinking is on, so it may not
        # switch on halfway.
        thought_level = session.thought_level
        await out.log.append_prompt(
            session,
            out.ids.message_id(),
            prompt.content,
            at=turn.started_at,
            typed=prompt.typed,
            context=prompt.context,
        )
        error: str | None = None
        try:
            stop = await self._loop(session, control, turn, thought_level)
        except ModelError as exc:
            error = str(exc)
            # An error notice (when to try again, for a usage limit), or the agent text
            # it was before notices.
            await out.sink.emit(session.id, failure_notice(exc, out.ids.message_id()))
            raise
        finally:
            # Also on failure or outside cancellation: the turn's usage is never lost.
            await out.log.record(session, turn, error)
        return PromptResult(stop_reason=stop, usage=turn.usage)

    async def _loop(
        self, session: Session, control: TurnControl, turn: Turn, thought_level: str
    ) -> StopReason:
        while True:
            if control.cancelled.is_set():
                stop = StopReason.CANCELLED
                break
            if not turn.may_request:
                stop = StopReason.MAX_TURN_REQUESTS
                break
            await self._deliver_steers(session, control)
            outcome = await self._request(session, control, turn, thought_level)
            if outcome is None:
                stop = StopReason.CANCELLED
                break
            if not outcome.continues_turn:
                if outcome is ModelStop.END_TURN and control.steers.waiting:
                    continue  # sent while the model answered: the turn goes on with it
                stop = outcome.as_stop_reason()
                break
            if outcome is ModelStop.TOOL_USE:
                await self._run_tools(session, control, turn)
        # No await since the loop last looked at the inbox: a message offered from here on
        # finds it closed (it will start the next turn instead), none is left behind.
        control.steers.close()
        turn.finish(stop, at=self._output.clock.now())
        return stop

    async def _deliver_steers(self, session: Session, control: TurnControl) -> None:
        """Store and show what the user sent since the last request, oldest first."""
        taken = control.steers.take()
        if not taken:
            return
        stored: dict[int, MessageId] = {}
        try:
            for index, steer in enumerate(taken):
                message_id = stored[index] = self._output.ids.message_id()
                at = self._output.clock.now()
                await self._output.log.append_prompt(session, message_id, steer.content, at=at)
                for block in steer.content:  # live, as a load replays it
                    event = UserContentReplayed(message_id=message_id, block=block)
                    await self._output.sink.emit(session.id, event)
                steer.delivered.set_result(message_id)
        finally:
            # Should storing fail, what was not stored is told so (never left waiting); what
            # was stored counts as delivered, so that it is never sent again.
            for index, steer in enumerate(taken):
                if not steer.delivered.done():
                    in_history = index in stored and _in_history(session, stored[index])
                    steer.delivered.set_result(stored[index] if in_history else None)
        await self._output.sink.emit(session.id, SteeringWaiting(waiting=control.steers.count))

    async def _request(
        self, session: Session, control: TurnControl, turn: Turn, thought_level: str
    ) -> ModelStop | None:
        """One model call (compacting first if needed). Returns its stop, or None when the
        turn was cancelled meanwhile."""
        try:
            if not await self._room.make(session, control, turn, thought_level):
                return ModelStop.END_TURN
            try:
                streamed = await self._replies.stream(session, control, turn, thought_level)
            except ContextOverflow:
                # The estimate was short of the provider's count: compact, then once more.
                if not await self._room.make(session, control, turn, thought_level, force=True):
                    return ModelStop.END_TURN
                streamed = await self._replies.stream(session, control, turn, thought_level)
        except TurnCancelled:
            return None
        if streamed is None:
            return None
        response, meter = streamed.response, self._model.meter
        # Priced as the model that answered: the session's may have changed meanwhile.
        cost = meter.cost(streamed.model, response.usage)
        turn.record_request(response.usage, cost)
        session.charge(response.usage, cost)
        if response.content:
            await self._output.log.append(
                session,
                Message(
                    id=streamed.message_id,
                    role=Role.ASSISTANT,
                    content=response.content,
                    created_at=self._output.clock.now(),
                    context_tokens=response.usage.total_tokens,
                ),
            )
        await self._output.sink.emit(session.id, meter.report(session, response.usage.total_tokens))
        return response.stop

    async def _run_tools(self, session: Session, control: TurnControl, turn: Turn) -> None:
        uses = session.messages[-1].tool_uses if session.messages else ()
        # On the last allowed request, the model could never see what the tools did:
        # they are not run, so nothing changes behind the user's back.
        refusal = (
            None
            if turn.may_request
            else (f"Not run: this turn reached its limit of {turn.max_requests} model requests.")
        )
        ran = await self._tools.run(session, control, uses, refusal=refusal)
        if not uses:
            return  # nothing to answer; calls shown early are settled
        if ran.spent != Usage():  # a sub-agent's requests count in this turn
            cost = self._model.meter.cost(session.model, ran.spent)
            turn.add_usage(ran.spent, cost)
            session.charge(ran.spent, cost)
        await self._output.log.append(
            session,
            Message(
                id=self._output.ids.message_id(),
                role=Role.USER,
                content=ran.results,
                created_at=self._output.clock.now(),
            ),
        )


def _in_history(session: Session, message_id: MessageId) -> bool:
    return any(m.id == message_id for m in reversed(session.messages[-8:]))
