from dataclasses import dataclass

from application.agent_loop.model_turn import ModelTurn
from application.agent_loop.reply_stream import record_usage
from application.commands.dispatch import BuiltInCommands
from application.dto import PromptResult
from application.errors import AuthRequired, ChildSessionReadOnly
from application.ports.tracing import NO_TRACING, Tracer
from application.runtime.registry import SessionRegistry
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.turn.ownership import TurnOwnership
from application.turn.preparation import PromptPreparation
from domain.commands import invocation_in
from domain.content import UserInputBlock
from domain.stop_reason import StopReason
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRequest:
    session_id: str
    content: tuple[UserInputBlock, ...]
    # The turn's control, made as the prompt was received (a cancel or close that came
    # right behind it has set it already); None: made as the turn begins.
    control: TurnControl | None = None


class Prompt:
    """Run one prompt turn: from the user's message to a stop reason.

    - One turn at a time per session: a second prompt meanwhile raises SessionBusy; across
      processes too, through the turn's lease (TurnOwnership, when given).
    - The prompt is read once for a slash command (domain.commands.Invocation). One that
      calls a built-in command runs the command instead (BuiltInCommands); any other is
      made ready (PromptPreparation: MCP servers, briefing, prompt commands) and run
      through the model (ModelTurn).
    - Without the model provider's credentials only a built-in command runs: anything
      else raises AuthRequired before the turn begins.
    """

    def __init__(
        self,
        *,
        registry: SessionRegistry,
        commands: BuiltInCommands,
        preparation: PromptPreparation,
        turn: ModelTurn,
        ownership: TurnOwnership,
        tracer: Tracer = NO_TRACING,
    ) -> None:
        self._registry = registry
        self._commands = commands
        self._preparation = preparation
        self._turn = turn
        self._ownership = ownership
        self._tracer = tracer

    async def execute(self, request: PromptRequest) -> PromptResult:
        # The turn's span: the parent of its model requests, tool calls and storage.
        with self._tracer.span("turn", {"session.id": request.session_id}) as span:
            result = await self._execute(request)
            span.set("acp.stop_reason", str(result.stop_reason))
            record_usage(span, result.usage)
            return result

    async def _execute(self, request: PromptRequest) -> PromptResult:
        if request.control is not None and request.control.cancelled.is_set():
            # Cancelled (or its session closed) after it was received, before it began.
            return _ended(StopReason.CANCELLED)
        active = self._registry.require(request.session_id)
        if (spawn := active.session.spawn) is not None:
            raise ChildSessionReadOnly(
                "This session is a sub-agent's run, kept read-only: it cannot be prompted. "
                "Prompt its parent session instead.",
                sessionId=request.session_id,
                parentSessionId=spawn.parent_id,
            )
        invocation = invocation_in(request.content)  # read once: every step below asks it
        call = self._commands.call_in(invocation)
        if call is None and not self._turn.has_credentials():
            raise AuthRequired(
                "No API key is configured for the model provider: run `iac-code login`, then "
                "authenticate.",
                methodId="api-key",
            )
        control = active.begin_turn(request.control)
        lease = None
        try:
            lease = await self._ownership.begin(active, control)
            if control.cancelled.is_set():  # while the lease was taken: nothing done yet
                return _ended(StopReason.CANCELLED)
            control.started.set()
            if call is not None:
                return await self._commands.run(active, control, call, request.content)
            try:
                prepared = await self._preparation.prepare(
                    active, control, request.content, invocation
                )
            except TurnCancelled:
                return _ended(StopReason.CANCELLED)
            if prepared is None:  # a prompt command failed; the user was told
                return _ended(StopReason.END_TURN)
            return await self._turn.run(active.session, control, prepared)
        finally:
            if lease is not None:
                await lease.release()
            active.end_turn(control)


def _ended(stop: StopReason) -> PromptResult:
    """A turn that ends before anything was asked of the model."""
    return PromptResult(stop_reason=stop, usage=Usage())
