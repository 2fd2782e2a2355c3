import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace

from application.commands import CommandRegistry
from application.dto import PromptResult
from application.errors import (
    AuthRequired,
    ContextOverflow,
    ModelError,
    ModelRequestRejected,
    ModelUnavailable,
)
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import (
    LLMClient,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from application.ports.mcp import McpPromptError
from application.ports.tracing import NO_TRACING, Span, Tracer
from application.runtime import ActiveSession, SessionRegistry, TurnCancelled, TurnControl
from application.use_cases.briefing import Briefer, PromptCommandFailed
from application.use_cases.commands.run import RunCommand
from application.use_cases.compaction import CompactionFailed, Compactor, NothingToCompact
from application.use_cases.context_meter import ContextMeter
from application.use_cases.model_request import RequestBuilder
from application.use_cases.session_log import SessionLog
from application.use_cases.session_servers import SessionServers
from application.use_cases.tool_call_log import ToolCallLog
from application.use_cases.tool_phase import ToolPhase
from application.use_cases.turn_ownership import TurnOwnership
from domain.commands import CommandCall, Invocation, invocation_in, unescape
from domain.content import (
    AssistantBlock,
    TextBlock,
    ThinkingBlock,
    UserInputBlock,
    valid_block,
)
from domain.events import Notice, TextDelta, ThinkingDelta
from domain.ids import MessageId
from domain.message import Message, Role
from domain.session import Session
from domain.stop_reason import ModelStop, StopReason
from domain.text import valid_text
from domain.turn import Turn
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRequest:
    session_id: str
    content: tuple[UserInputBlock, ...]
    # The turn's control, made as the prompt was received (a cancel or close that came
    # right behind it has set it already); None: made as the turn begins.
    control: TurnControl | None = None


class _Told(Exception):
    """A prompt command's text could not be made; the user was told why."""


@dataclass(slots=True)
class _Reply:
    """What the user has seen of a reply in flight, kept if the reply is cut short."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return len(self.text) + len(self.thinking)

    def seen(self) -> tuple[AssistantBlock, ...]:
        blocks: list[AssistantBlock] = []
        if self.thinking:
            blocks.append(ThinkingBlock(thinking="".join(self.thinking)))
        if self.text:
            blocks.append(TextBlock(text="".join(self.text)))
        return tuple(blocks)


class Prompt:
    """Run one prompt turn: the agent loop from the user's message to a stop reason.

    - One turn at a time per session: a second prompt meanwhile raises SessionBusy; across
      processes too, through the turn's lease (TurnOwnership, when given).
    - A prompt that calls a slash command runs the command instead (RunCommand).
    - Every message is committed as it completes, in its own short transaction; no
      transaction is open while the model streams.
    - Before each model request the context's size is estimated; past the threshold it is
      compacted first. A request the provider refuses as too long is compacted and retried
      once.
    - Cancellation ends the turn with CANCELLED; what the user saw of the reply is kept.
    - A provider failure is shown to the user as a notice, then raised as ModelError.
    - Tool uses run in order through the ToolPhase (permissions included); their results
      are committed before the next model call.
    """

    def __init__(
        self,
        *,
        registry: SessionRegistry,
        llm: LLMClient,
        sink: EventSink,
        clock: Clock,
        ids: IdGenerator,
        tools: ToolPhase,
        calls: ToolCallLog,
        requests: RequestBuilder,
        log: SessionLog,
        meter: ContextMeter,
        compactor: Compactor,
        commands: CommandRegistry,
        run_command: RunCommand,
        servers: SessionServers | None = None,
        briefer: Briefer | None = None,
        ownership: TurnOwnership | None = None,
        tracer: Tracer = NO_TRACING,
    ) -> None:
        self._registry = registry
        self._llm = llm
        self._sink = sink
        self._clock = clock
        self._ids = ids
        self._tools = tools
        self._calls = calls
        self._requests = requests
        self._log = log
        self._meter = meter
        self._compactor = compactor
        self._commands = commands
        self._run_command = run_command
        self._servers = servers
        self._briefer = briefer
        self._ownership = ownership  # None: no other process runs turns of these sessions
        self._tracer = tracer
        # Set when compaction failed in this turn while the context still fitted: the turn
        # goes on without trying (and telling) again at every request. One Prompt per turn.
        self._gave_up_compacting = False

    async def execute(self, request: PromptRequest) -> PromptResult:
        # The turn's span: the parent of its model requests, tool calls and storage.
        with self._tracer.span("turn", {"session.id": request.session_id}) as span:
            result = await self._execute(request)
            span.set("acp.stop_reason", str(result.stop_reason))
            _record_usage(span, result.usage)
            return result

    async def _execute(self, request: PromptRequest) -> PromptResult:
        if request.control is not None and request.control.cancelled.is_set():
            # Cancelled (or its session closed) after it was received, before it began.
            return PromptResult(stop_reason=StopReason.CANCELLED, usage=Usage())
        active = self._registry.require(request.session_id)
        invocation = invocation_in(request.content)  # read once: every step below asks it
        call = invocation.call(self._commands.names) if invocation is not None else None
        if call is None and not self._llm.has_credentials():
            raise AuthRequired(
                "No API key is configured for the model provider.", methodId="api-key"
            )
        control = active.begin_turn(request.control)
        lease = None
        try:
            lease = await self._ownership.begin(active, control) if self._ownership else None
            if control.cancelled.is_set():  # while the lease was taken: nothing done yet
                return PromptResult(stop_reason=StopReason.CANCELLED, usage=Usage())
            if call is not None:
                offered = self._servers.offered(active) if self._servers else None
                return await self._run_command.execute(
                    active.session, control, call, request.content, offered
                )
            try:
                expansion = await self._prepared(active, control, invocation)
            except TurnCancelled:
                return PromptResult(stop_reason=StopReason.CANCELLED, usage=Usage())
            except _Told:
                return PromptResult(stop_reason=StopReason.END_TURN, usage=Usage())
            names = self._commands.names | {p.name for p in SessionServers.prompts(active)}
            context = Briefer.context(active.briefing) if self._briefer else None
            if expansion is None:  # as typed
                content = invocation.unescaped(names) if invocation else request.content
                return await self._run(active.session, control, content, context=context)
            assert invocation is not None, "only a prompt command expands"
            # An expanded prompt command is stored with the words the user typed. Its text
            # is unescaped as the user's would be (an MCP prompt may start `//name`).
            content = invocation.with_text(unescape(expansion, names))
            return await self._run(
                active.session, control, content, typed=invocation.text, context=context
            )
        finally:
            if lease is not None:
                await lease.release()
            active.end_turn(control)

    async def _prepared(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """Readies the turn: MCP servers ready, the turn's briefing read. Returns the text
        a prompt command stands for, None when the prompt calls none; raises _Told when
        that text could not be made (the user is told why)."""
        expansion = await self._with_servers(active, control, invocation)
        if self._briefer is None:
            return expansion
        await control.guard(self._briefer.gather(active))
        if expansion is not None:
            return expansion  # an MCP prompt: not also a project command
        return await self._project_command(active, control, invocation)

    async def _project_command(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """The text `/init` or `/<skill> …` stands for."""
        assert self._briefer is not None
        taken = self._commands.names | {p.name for p in SessionServers.prompts(active)}
        call = self._briefer.call_in(active, invocation, taken) if invocation else None
        if call is None:
            return None
        making = self._briefer.expand(active, call)
        return await self._expanded(active, control, call, making, PromptCommandFailed)

    async def _with_servers(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """Waits for the session's MCP servers (each within its connect timeout). Returns
        the text of the MCP prompt the prompt calls (`/mcp__server__prompt …`), if any."""
        if self._servers is None:
            return None
        # The connector may still be loading (the MCP SDK's import): a cancel does not wait
        # for it, and the servers still open, shielded, for the session's next prompt.
        await control.guard(asyncio.shield(self._servers.connect(active)))
        if active.mcp is not None:
            await control.guard(active.mcp.ready())
        found = self._servers.prompt_call(active, invocation) if invocation else None
        if found is None:
            return None
        prompt, call = found
        making = self._servers.expand(active, prompt, call)
        return await self._expanded(active, control, call, making, McpPromptError)

    async def _expanded(
        self,
        active: ActiveSession,
        control: TurnControl,
        call: CommandCall,
        making: Awaitable[str],
        failure: type[Exception],
    ) -> str:
        """What a prompt command stands for. Raises _Told (the user told why) when that
        text could not be made."""
        try:
            return await control.guard(making)
        except failure as exc:
            await self._sink.emit(
                active.session.id,
                Notice(message_id=self._ids.message_id(), text=f"/{call.name} failed: {exc}"),
            )
            raise _Told from exc

    async def _run(
        self,
        session: Session,
        control: TurnControl,
        content: tuple[UserInputBlock, ...],
        *,
        typed: str | None = None,
        context: str | None = None,
    ) -> PromptResult:
        limits = self._requests.limits
        turn = Turn(started_at=self._clock.now(), max_requests=limits.max_turn_requests)
        # The thought level holds for the whole turn: the provider requires every assistant
        # message of a tool loop to start with thinking once thinking is on, so it may not
        # switch on halfway.
        thought_level = session.thought_level
        await self._log.append_prompt(
            session,
            self._ids.message_id(),
            content,
            at=turn.started_at,
            typed=typed,
            context=context,
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
            await self._log.record(session, turn, error)
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
        """One model call (compacting first if needed). Returns its stop, or None when the
        turn was cancelled meanwhile."""
        try:
            if not await self._make_room(session, control, turn, thought_level):
                return ModelStop.END_TURN
            try:
                streamed = await self._stream(session, control, turn, thought_level)
            except ContextOverflow:
                # The estimate was short of the provider's count: compact, then once more.
                if not await self._make_room(session, control, turn, thought_level, force=True):
                    return ModelStop.END_TURN
                streamed = await self._stream(session, control, turn, thought_level)
        except TurnCancelled:
            return None
        if streamed is None:
            return None
        message_id, model, response = streamed
        # Priced as the model that answered: the session's may have changed meanwhile.
        cost = self._meter.cost(model, response.usage)
        turn.record_request(response.usage, cost)
        session.charge(response.usage, cost)
        if response.content:
            await self._log.append(
                session,
                Message(
                    id=message_id,
                    role=Role.ASSISTANT,
                    content=response.content,
                    created_at=self._clock.now(),
                    context_tokens=response.usage.total_tokens,
                ),
            )
        await self._sink.emit(session.id, self._meter.report(session, response.usage.total_tokens))
        return response.stop

    async def _stream(
        self, session: Session, control: TurnControl, turn: Turn, thought_level: str
    ) -> tuple[MessageId, str, ModelResponse] | None:
        message_id = self._ids.message_id()
        reply = _Reply()
        request = self._requests.build(session, thought_level)
        attributes = {
            "session.id": session.id,
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": request.model,
        }
        try:
            with self._tracer.span(f"chat {request.model}", attributes) as span:
                response = await control.guard(
                    self._consume(session, control, request, message_id, reply)
                )
                span.set("gen_ai.response.finish_reasons", (str(response.stop),))
                _record_usage(span, response.usage)
        except TurnCancelled:
            # A cut stream brings no usage of its own: what streamed was produced (and is
            # billed), one token a chunk.
            streamed = Usage(output_tokens=reply.chunks)
            cost = self._meter.cost(request.model, streamed)
            turn.record_request(streamed, cost)
            session.charge(streamed, cost)
            await self._keep_partial(session, message_id, reply)
            await self._calls.settle_announced(session, control)
            return None
        except ContextOverflow:
            await self._calls.settle_announced(session, control)
            if reply.seen():  # not a refusal up front: the stream had begun
                await self._keep_partial(session, message_id, reply)
                raise ModelRequestRejected(
                    "The provider ran out of context while answering."
                ) from None
            raise
        except ModelError:
            await self._keep_partial(session, message_id, reply)
            await self._calls.settle_announced(session, control)
            raise
        return message_id, request.model, response

    async def _make_room(
        self,
        session: Session,
        control: TurnControl,
        turn: Turn,
        thought_level: str,
        *,
        force: bool = False,
    ) -> bool:
        """Compact the context if the next request would not fit well. False: it cannot
        fit, and the user was told why (the turn ends; nothing is lost)."""
        max_tokens = self._requests.max_tokens(session, thought_level)
        overhead = self._requests.overhead(session)
        used = self._meter.estimate(session, overhead=overhead)
        if not force and not self._meter.needs_compaction(session, used, max_tokens):
            return True
        fits = self._meter.fits(session, used, max_tokens)
        if not force and fits and self._gave_up_compacting:
            return True  # tried once this turn; each request of a tool loop would try again
        try:
            await self._compactor.compact(session, control, turn, before=used, overhead=overhead)
            return True
        except NothingToCompact:
            problem = "there is nothing older to summarise"
        except CompactionFailed as exc:
            problem = f"compaction failed: {exc}"
        if not force and fits:
            self._gave_up_compacting = True
            await self._tell(session, f"\n\n[Context not compacted ({problem}); going on.]\n\n")
            return True
        await self._tell(
            session,
            f"\n\n[The conversation no longer fits in {session.model}'s context window and "
            f"{problem}. Nothing was lost: try /compact with a focus, /clear, or a model "
            "with a larger window.]\n\n",
        )
        return False

    async def _tell(self, session: Session, text: str) -> None:
        await self._sink.emit(session.id, Notice(message_id=self._ids.message_id(), text=text))

    async def _consume(
        self,
        session: Session,
        control: TurnControl,
        request: ModelRequest,
        message_id: MessageId,
        reply: _Reply,
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
                case ToolUseStarted(id=call_id, name=name):
                    await self._calls.announce(session, control, call_id, name)
                case ModelResponse():
                    content = tuple(valid_block(b) for b in event.content)
                    return replace(event, content=content)
        raise ModelUnavailable("The model stream ended without a complete response.")

    async def _keep_partial(self, session: Session, message_id: MessageId, reply: _Reply) -> None:
        if seen := reply.seen():
            await self._log.append(
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
            cost = self._meter.cost(session.model, ran.spent)
            turn.add_usage(ran.spent, cost)
            session.charge(ran.spent, cost)
        await self._log.append(
            session,
            Message(
                id=self._ids.message_id(),
                role=Role.USER,
                content=ran.results,
                created_at=self._clock.now(),
            ),
        )


def _record_usage(span: Span, usage: Usage) -> None:
    span.set("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    span.set("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
