from application.dto import PromptResult
from application.history.session_log import SessionLog
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.runtime.command_registry import CommandInput, CommandRegistry
from application.runtime.turn_control import TurnCancelled, TurnControl
from domain.commands import CommandCall, CommandSpec
from domain.content import TextBlock, UserInputBlock
from domain.events import Notice
from domain.message import Message, MessageKind, Role
from domain.session import Session
from domain.stop_reason import StopReason
from domain.turn import Turn


class RunCommand:
    """A prompt that calls a slash command: it never reaches the model as text.

    The prompt is stored as a COMMAND message and the answer as COMMAND_OUTPUT, so a load
    replays both as they were shown (unless the command's spec says `stored=False`: then the
    answer is only shown); the turn is recorded with whatever the command's model requests
    used (a /compact's summary)."""

    def __init__(
        self,
        *,
        registry: CommandRegistry,
        log: SessionLog,
        sink: EventSink,
        clock: Clock,
        ids: IdGenerator,
    ) -> None:
        self._registry = registry
        self._log = log
        self._sink = sink
        self._clock = clock
        self._ids = ids

    async def execute(
        self,
        session: Session,
        control: TurnControl,
        call: CommandCall,
        content: tuple[UserInputBlock, ...],
        offered: tuple[CommandSpec, ...] | None = None,
    ) -> PromptResult:
        """`offered`: every command the session offers (its MCP prompts too), for /help."""
        command = self._registry.get(call.name)
        assert command is not None, "parsed against this registry"
        turn = Turn(started_at=self._clock.now(), max_requests=1)
        stored = command.spec.stored
        if stored:
            await self._log.append_prompt(
                session,
                self._ids.message_id(),
                content,
                at=turn.started_at,
                kind=MessageKind.COMMAND,
            )
        reply_id = self._ids.message_id()
        stop, error = StopReason.END_TURN, None
        try:
            answer = await command.run(
                CommandInput(
                    session=session,
                    control=control,
                    turn=turn,
                    argument=call.argument,
                    reply_id=reply_id,
                    offered=offered if offered is not None else self._registry.specs(),
                )
            )
        except TurnCancelled:
            answer, stop = "", StopReason.CANCELLED
        except Exception as exc:
            error = f"/{call.name} failed: {exc}"
            raise
        finally:
            turn.finish(stop, at=self._clock.now())
            await self._log.record(session, turn, error)
        if answer:
            await self._sink.emit(session.id, Notice(message_id=reply_id, text=answer))
        if answer and stored:
            await self._log.append(
                session,
                Message(
                    id=reply_id,
                    role=Role.ASSISTANT,
                    content=(TextBlock(text=answer),),
                    created_at=self._clock.now(),
                    kind=MessageKind.COMMAND_OUTPUT,
                ),
            )
        return PromptResult(stop_reason=stop, usage=turn.usage)
