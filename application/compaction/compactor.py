from dataclasses import dataclass, replace

from application.compaction.context_meter import ContextMeter
from application.errors import ModelError
from application.history.session_log import SessionLog
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelRequest, ModelResponse, TextChunk
from application.runtime.turn_control import TurnCancelled, TurnControl
from domain.compaction import SUMMARY_SYSTEM, instruction, transcript
from domain.content import TextBlock
from domain.context import (
    CHARS_PER_TOKEN,
    Context,
    context_estimate,
    current_context,
    split_for_compaction,
)
from domain.events import (
    AgentEvent,
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
)
from domain.message import Compaction, Message, MessageKind, Role
from domain.session import Session
from domain.turn import Turn

SUMMARY_MAX_TOKENS = 4_096
# What a summary request may carry of the conversation, as a share of the window: the
# rest is for the instructions and the summary itself.
TRANSCRIPT_SHARE = 0.6


class NothingToCompact(Exception):
    """The context holds no more than what compaction would keep verbatim."""


class CompactionFailed(Exception):
    """The summary request failed or gave no summary; nothing changed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Compacted:
    tokens_before: int
    tokens_after: int


@dataclass(slots=True)
class _Job:
    """One compaction under way: what it works on, and whether its summary was shown."""

    session: Session
    control: TurnControl
    turn: Turn
    started: CompactionChanged
    focus: str | None
    streamed: bool = False


class Compactor:
    """Replace the older part of a session's context by a summary, in what the model sees.

    One model request writes the summary of everything before the kept turns. The summary
    and where the kept part starts are stored as a COMPACTION marker, so a restart or a load
    continues from the compacted context; the stored history itself is untouched. The
    summary's usage counts in the turn that asked for it."""

    def __init__(
        self,
        *,
        llm: LLMClient,
        log: SessionLog,
        sink: EventSink,
        clock: Clock,
        ids: IdGenerator,
        meter: ContextMeter,
    ) -> None:
        self._llm = llm
        self._log = log
        self._sink = sink
        self._clock = clock
        self._ids = ids
        self._meter = meter

    async def compact(
        self,
        session: Session,
        control: TurnControl,
        turn: Turn,
        *,
        before: int,
        overhead: int,
        focus: str | None = None,
    ) -> Compacted:
        """Raises NothingToCompact, CompactionFailed, or TurnCancelled (nothing changed).

        The client is shown the compaction from start to end under one id (its marker's):
        started, the summary as the model writes it, then completed, failed or cancelled."""
        context = current_context(session.messages)
        split = split_for_compaction(
            context.messages,
            keep_turns=self._meter.policy.keep_turns,
            keep_budget=self._meter.keep_budget(session),
        )
        if split == 0:
            raise NothingToCompact
        started = CompactionChanged(
            compaction_id=self._ids.message_id(),
            status=CompactionStatus.IN_PROGRESS,
            tokens_before=before,
            window=self._meter.window(session),
        )
        await self._sink.emit(session.id, started)
        job = _Job(session, control, turn, started, focus)
        try:
            after = await self._replace(job, context, split, overhead)
        except TurnCancelled:
            await self._sink.emit(session.id, replace(started, status=CompactionStatus.CANCELLED))
            raise
        except Exception as exc:  # the client must not be left with a compaction under way
            failed = replace(started, status=CompactionStatus.FAILED, error=str(exc) or repr(exc))
            await self._sink.emit(session.id, failed)
            raise
        completed = replace(started, status=CompactionStatus.COMPLETED, tokens_after=after)
        await self._sink.emit(session.id, completed)
        await self._sink.emit(session.id, self._meter.report(session, after))
        return Compacted(tokens_before=before, tokens_after=after)

    async def _replace(self, job: _Job, context: Context, split: int, overhead: int) -> int:
        """Summarise the context before `split` and store the marker that stands for it;
        the compacted context's size."""
        chat = context.messages
        summary = await self._summarise(job, context.summary, chat[:split])
        kept = chat[split:]
        facts = Compaction(  # tokens_after: counted below, with the marker in place
            keep_from=kept[0].id if kept else None,
            tokens_before=job.started.tokens_before,
            tokens_after=0,
            focus=job.focus or None,
            window=job.started.window,
        )
        marker = Message(
            id=job.started.compaction_id,
            role=Role.ASSISTANT,
            content=(TextBlock(text=summary),),
            created_at=self._clock.now(),
            kind=MessageKind.COMPACTION,
            compaction=facts,
        )
        session = job.session
        after = context_estimate([*session.messages, marker], overhead=overhead)
        marker = replace(marker, compaction=replace(facts, tokens_after=after))
        await self._log.append(session, marker)
        return after

    async def _summarise(self, job: _Job, earlier: str | None, messages: list[Message]) -> str:
        session = job.session
        window = self._meter.window(session)
        text = transcript(
            earlier, messages, limit_chars=int(window * TRANSCRIPT_SHARE * CHARS_PER_TOKEN)
        )
        request = ModelRequest(
            model=session.model,
            system=SUMMARY_SYSTEM,
            messages=(
                Message(
                    id=self._ids.message_id(),
                    role=Role.USER,
                    content=(TextBlock(text=f"{text}\n\n---\n\n{instruction(job.focus)}"),),
                    created_at=self._clock.now(),
                ),
            ),
            max_tokens=SUMMARY_MAX_TOKENS,
        )
        try:
            response = await job.control.guard(self._complete(request, job))
        except ModelError as exc:
            raise CompactionFailed(str(exc)) from exc
        cost = self._meter.cost(request.model, response.usage)
        job.turn.add_usage(response.usage, cost)
        session.charge(response.usage, cost)
        summary = "".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
        if not summary:
            raise CompactionFailed("the model wrote no summary")
        if not job.streamed:  # the provider sent it whole: shown whole
            await self._show(job, summary)
        return summary

    async def _complete(self, request: ModelRequest, job: _Job) -> ModelResponse:
        async for event in self._llm.stream(request):
            if isinstance(event, TextChunk) and event.text:
                job.streamed = True
                await self._show(job, event.text)
            elif isinstance(event, ModelResponse):
                return event
        raise CompactionFailed("the summary stream ended without a complete response")

    async def _show(self, job: _Job, text: str) -> None:
        delta = CompactionSummaryDelta(compaction_id=job.started.compaction_id, text=text)
        await self._sink.emit(job.session.id, delta)


def replayed(marker: Message) -> list[AgentEvent]:
    """A stored compaction shown again as it was live: started, its summary, completed."""
    facts = marker.compaction or Compaction(keep_from=None, tokens_before=0, tokens_after=0)
    started = CompactionChanged(
        compaction_id=marker.id,
        status=CompactionStatus.IN_PROGRESS,
        tokens_before=facts.tokens_before,
        window=facts.window,
    )
    summary = marker.visible_text()
    shown = [CompactionSummaryDelta(compaction_id=marker.id, text=summary)] if summary else []
    completed = replace(started, status=CompactionStatus.COMPLETED, tokens_after=facts.tokens_after)
    return [started, *shown, completed]
