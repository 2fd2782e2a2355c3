"""One model reply, streamed to the user as it comes."""

from dataclasses import dataclass, field, replace

from application.agent_loop.parts import ModelSide, TurnOutput
from application.agent_loop.provider_retry import ProviderRetry
from application.errors import ContextOverflow, ModelError, ModelRequestRejected, ModelUnavailable
from application.ports.llm import (
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from application.ports.tracing import Span, Tracer
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.tools.call_log import ToolCallLog
from domain.content import AssistantBlock, TextBlock, ThinkingBlock, valid_block
from domain.events import TextDelta, ThinkingDelta
from domain.ids import MessageId
from domain.message import Message, Role
from domain.session import Session
from domain.text import valid_text
from domain.turn import Turn
from domain.usage import Usage


@dataclass(slots=True)
class _Reply:
    """What the user has seen of a reply in flight, kept if the reply is cut short."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    chunks: int = 0  # the model's deltas shown (a chunk may join several)

    def seen(self) -> tuple[AssistantBlock, ...]:
        blocks: list[AssistantBlock] = []
        if self.thinking:
            blocks.append(ThinkingBlock(thinking="".join(self.thinking)))
        if self.text:
            blocks.append(TextBlock(text="".join(self.text)))
        return tuple(blocks)


@dataclass(frozen=True, slots=True, kw_only=True)
class Streamed:
    message_id: MessageId  # the reply's, as its chunks were shown
    model: str  # the model that answered (the session's may have changed meanwhile)
    response: ModelResponse


def record_usage(span: Span, usage: Usage) -> None:
    span.set("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    span.set("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)


class ReplyStream:
    """Streams one model request's reply: text and thinking shown as they come, a tool call
    shown as soon as the model begins to write it.

    - Model text enters here: repaired so that one bad character cannot break the
      session's storage, the wire or the next request.
    - A reply cut short (cancelled, or the provider failed) keeps what the user saw of it;
      a cancelled one is charged one token a chunk. Calls shown early are then settled.
    - A provider that runs out of context once the stream has begun rejects the request
      (ModelRequestRejected): compacting would not give the same answer back.
    - A request that failed before anything of it was shown is asked again as `retry`
      decides (rate limits, overloads, outages), each wait told and cancellable.
    """

    def __init__(
        self,
        *,
        model: ModelSide,
        output: TurnOutput,
        calls: ToolCallLog,
        tracer: Tracer,
        retry: ProviderRetry,
    ) -> None:
        self._model = model
        self._output = output
        self._calls = calls
        self._tracer = tracer
        self._retry = retry

    async def stream(
        self, session: Session, control: TurnControl, turn: Turn, thought_level: str
    ) -> Streamed | None:
        """The complete reply; None when the turn was cancelled meanwhile. Raises
        ContextOverflow (nothing streamed yet) and ModelError."""
        message_id = self._output.ids.message_id()
        reply = _Reply()
        request = self._model.requests.build(session, thought_level)
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
                record_usage(span, response.usage)
        except TurnCancelled:
            # A cut stream brings no usage of its own: what streamed was produced (and is
            # billed), one token a chunk.
            streamed = Usage(output_tokens=reply.chunks)
            cost = self._model.meter.cost(request.model, streamed)
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
        return Streamed(message_id=message_id, model=request.model, response=response)

    async def _consume(
        self,
        session: Session,
        control: TurnControl,
        request: ModelRequest,
        message_id: MessageId,
        reply: _Reply,
    ) -> ModelResponse:
        """The reply, asking again while `retry` says so (each try numbered in the
        request's `attempt`)."""
        attempt, waited = 1, 0.0
        while True:
            shown = (reply.chunks, len(control.announced))
            try:
                return await self._try(session, control, request, message_id, reply)
            except ModelError as exc:
                if (reply.chunks, len(control.announced)) != shown:
                    raise
                wait = self._retry.wait_after(exc, attempt, waited)
                if wait is None:
                    if attempt > 1 and "attempts" in exc.details:
                        exc.details["attempts"] = attempt  # the tries made, not the SDK's
                    raise
            await self._retry.wait(session.id, wait)
            waited += wait.seconds
            attempt = wait.attempt
            request = replace(request, attempt=attempt)

    async def _try(
        self,
        session: Session,
        control: TurnControl,
        request: ModelRequest,
        message_id: MessageId,
        reply: _Reply,
    ) -> ModelResponse:
        sink = self._output.sink
        async for event in self._model.llm.stream(request):
            match event:
                case TextChunk(text=text, deltas=deltas):
                    text = valid_text(text)
                    reply.text.append(text)
                    reply.chunks += deltas
                    await sink.emit(session.id, TextDelta(message_id=message_id, text=text))
                case ThinkingChunk(text=text, deltas=deltas):
                    text = valid_text(text)
                    reply.thinking.append(text)
                    reply.chunks += deltas
                    await sink.emit(session.id, ThinkingDelta(message_id=message_id, text=text))
                case ToolUseStarted(id=call_id, name=name):
                    await self._calls.announce(session, control, call_id, name)
                case ModelResponse():
                    content = tuple(valid_block(b) for b in event.content)
                    return replace(event, content=content)
        raise ModelUnavailable("The model stream ended without a complete response.")

    async def _keep_partial(self, session: Session, message_id: MessageId, reply: _Reply) -> None:
        if seen := reply.seen():
            await self._output.log.append(
                session,
                Message(
                    id=message_id,
                    role=Role.ASSISTANT,
                    content=seen,
                    created_at=self._output.clock.now(),
                    interrupted=True,
                ),
            )
