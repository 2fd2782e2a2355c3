from dataclasses import dataclass, field, replace

from application.dto import PromptResult
from application.errors import AuthRequired, ModelError, ModelUnavailable
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import (
    LLMClient,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
)
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry, TurnCancelled, TurnControl
from application.use_cases.tool_phase import ToolPhase
from domain.config import Catalog
from domain.content import (
    AssistantBlock,
    TextBlock,
    ThinkingBlock,
    UserInputBlock,
    valid_block,
)
from domain.events import Notice, SessionTitleChanged, TextDelta, ThinkingDelta
from domain.history import provider_view
from domain.ids import MessageId
from domain.message import Message, Role
from domain.modes import ModeId
from domain.session import Session
from domain.stop_reason import ModelStop, StopReason
from domain.text import valid_text
from domain.turn import Turn
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRequest:
    session_id: str
    content: tuple[UserInputBlock, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnLimits:
    max_turn_requests: int = 50
    max_tokens: int = 8192


PLAN_MODE_PROMPT = (
    "\n\nThe session is in plan mode. You may read and search, but you must not change "
    "files or run commands: write_file, edit_file and bash are refused. Study the task, then "
    "end with a concise, step-by-step plan that names the files to change, and call "
    "exit_plan_mode with it to ask the user to approve it."
)
KEEP_A_PLAN_PROMPT = (
    "\n\nFor multi-step work (three or more steps, or several tasks at once), keep a plan "
    "with todo_write: write it before you start, keep one task in_progress at a time, mark "
    "each completed as soon as it is done, and send the whole list every time."
)


def default_system_prompt(session: Session, mode: str = ModeId.DEFAULT) -> str:
    prompt = (
        "You are iac-code, an AI coding agent working with a developer through their editor.\n"
        f"The working directory of this session is {session.cwd}.\n"
        "Be precise and concise; say what you did and what you did not do."
    ) + KEEP_A_PLAN_PROMPT
    return prompt + PLAN_MODE_PROMPT if mode == ModeId.PLAN else prompt


@dataclass(slots=True)
class _Reply:
    """What the user has seen of a reply in flight, kept if the reply is cut short."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)

    def seen(self) -> tuple[AssistantBlock, ...]:
        blocks: list[AssistantBlock] = []
        if self.thinking:
            blocks.append(ThinkingBlock(thinking="".join(self.thinking)))
        if self.text:
            blocks.append(TextBlock(text="".join(self.text)))
        return tuple(blocks)


class Prompt:
    """Run one prompt turn: the agent loop from the user's message to a stop reason.

    - One turn at a time per session: a second prompt meanwhile raises SessionBusy.
    - Every message is committed as it completes, in its own short transaction; no
      transaction is open while the model streams.
    - Cancellation ends the turn with CANCELLED; what the user saw of the reply is kept.
    - A provider failure is shown to the user as a notice, then raised as ModelError.
    - Tool uses run in order through the ToolPhase (permissions included); their results
      are committed before the next model call.
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        llm: LLMClient,
        sink: EventSink,
        clock: Clock,
        ids: IdGenerator,
        limits: TurnLimits,
        tools: ToolPhase,
        catalog: Catalog,
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._llm = llm
        self._sink = sink
        self._clock = clock
        self._ids = ids
        self._limits = limits
        self._tools = tools
        self._catalog = catalog

    async def execute(self, request: PromptRequest) -> PromptResult:
        active = self._registry.require(request.session_id)
        if not self._llm.has_credentials():
            raise AuthRequired(
                "No API key is configured for the model provider.", methodId="api-key"
            )
        control = active.begin_turn()
        try:
            return await self._run(active.session, control, request.content)
        finally:
            active.end_turn(control)

    async def _run(
        self, session: Session, control: TurnControl, content: tuple[UserInputBlock, ...]
    ) -> PromptResult:
        turn = Turn(started_at=self._clock.now(), max_requests=self._limits.max_turn_requests)
        # The thought level holds for the whole turn: the provider requires every assistant
        # message of a tool loop to start with thinking once thinking is on, so it may not
        # switch on halfway.
        thought_level = session.thought_level
        await self._append(
            session,
            Message(
                id=self._ids.message_id(),
                role=Role.USER,
                content=content,
                created_at=turn.started_at,
            ),
        )
        error: str | None = None
        try:
            stop = await self._loop(session, control, turn, thought_level)
        except ModelError as exc:
            error = str(exc)
            await self._sink.emit(
                session.id,
                Notice(
                    message_id=self._ids.message_id(), text=f"\n\n[model provider error: {exc}]"
                ),
            )
            raise
        finally:
            # Also on failure or outside cancellation: the turn's usage is never lost.
            await self._record(session, turn, error)
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
            outcome = await self._request(session, control, turn, thought_level)
            if outcome is None:
                stop = StopReason.CANCELLED
                break
            if not outcome.continues_turn:
                stop = outcome.as_stop_reason()
                break
            if outcome is ModelStop.TOOL_USE:
                await self._run_tools(session, control, turn)
        turn.finish(stop, at=self._clock.now())
        return stop

    async def _request(
        self, session: Session, control: TurnControl, turn: Turn, thought_level: str
    ) -> ModelStop | None:
        """One model call. Returns its stop, or None when the turn was cancelled meanwhile."""
        message_id = self._ids.message_id()
        reply = _Reply()
        request = self._model_request(session, thought_level)
        try:
            response = await control.guard(self._consume(session, request, message_id, reply))
        except TurnCancelled:
            turn.record_request(Usage())
            await self._keep_partial(session, message_id, reply)
            return None
        except ModelError:
            await self._keep_partial(session, message_id, reply)
            raise
        turn.record_request(response.usage)
        if response.content:
            await self._append(
                session,
                Message(
                    id=message_id,
                    role=Role.ASSISTANT,
                    content=response.content,
                    created_at=self._clock.now(),
                ),
            )
        return response.stop

    def _model_request(self, session: Session, thought_level: str) -> ModelRequest:
        """The request for the session's current model and mode (both may change mid-turn)."""
        model = self._catalog.model(session.model)
        thinking = model.thinking_plan(thought_level, self._limits.max_tokens)
        mode = self._tools.mode_of(session)
        return ModelRequest(
            model=session.model,
            system=default_system_prompt(session, mode),
            # A model that cannot read images gets each one as its `[image: …]` marker.
            messages=tuple(provider_view(session.messages, images=model.images)),
            max_tokens=thinking.max_tokens,
            thinking_budget=thinking.budget,
            tools=self._tools.definitions(session),
        )

    async def _consume(
        self, session: Session, request: ModelRequest, message_id: MessageId, reply: _Reply
    ) -> ModelResponse:
        # Model text enters here: repaired so that one bad character cannot break the
        # session's storage, the wire or the next request.
        async for event in self._llm.stream(request):
            match event:
                case TextChunk(text=text):
                    text = valid_text(text)
                    reply.text.append(text)
                    await self._sink.emit(session.id, TextDelta(message_id=message_id, text=text))
                case ThinkingChunk(text=text):
                    text = valid_text(text)
                    reply.thinking.append(text)
                    await self._sink.emit(
                        session.id, ThinkingDelta(message_id=message_id, text=text)
                    )
                case ModelResponse():
                    content = tuple(valid_block(b) for b in event.content)
                    return replace(event, content=content)
        raise ModelUnavailable("The model stream ended without a complete response.")

    async def _keep_partial(self, session: Session, message_id: MessageId, reply: _Reply) -> None:
        if seen := reply.seen():
            await self._append(
                session,
                Message(
                    id=message_id,
                    role=Role.ASSISTANT,
                    content=seen,
                    created_at=self._clock.now(),
                    interrupted=True,
                ),
            )

    async def _run_tools(self, session: Session, control: TurnControl, turn: Turn) -> None:
        uses = session.messages[-1].tool_uses if session.messages else ()
        if not uses:
            return
        # On the last allowed request, the model could never see what the tools did:
        # they are not run, so nothing changes behind the user's back.
        refusal = (
            None
            if turn.may_request
            else (f"Not run: this turn reached its limit of {turn.max_requests} model requests.")
        )
        results = await self._tools.run(session, control, uses, refusal=refusal)
        await self._append(
            session,
            Message(
                id=self._ids.message_id(),
                role=Role.USER,
                content=results,
                created_at=self._clock.now(),
            ),
        )

    async def _append(self, session: Session, message: Message) -> None:
        titled = session.add_message(message)
        async with self._uow as uow:
            await uow.sessions.append_message(session, message)
            await uow.commit()
        if titled and session.title:
            await self._sink.emit(session.id, SessionTitleChanged(title=session.title))

    async def _record(self, session: Session, turn: Turn, error: str | None) -> None:
        async with self._uow as uow:
            await uow.sessions.record_turn(session.id, turn, error)
            await uow.commit()
