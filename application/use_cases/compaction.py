from dataclasses import dataclass, replace

from application.errors import ModelError
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelRequest, ModelResponse
from application.runtime import TurnControl
from application.use_cases.context_meter import ContextMeter
from application.use_cases.session_log import SessionLog
from domain.compaction import SUMMARY_SYSTEM, instruction, transcript
from domain.content import TextBlock
from domain.context import (
    CHARS_PER_TOKEN,
    context_estimate,
    current_context,
    split_for_compaction,
)
from domain.events import Notice
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
        """Raises NothingToCompact, CompactionFailed, or TurnCancelled (nothing changed)."""
        context = current_context(session.messages)
        chat = context.messages
        split = split_for_compaction(
            chat,
            keep_turns=self._meter.policy.keep_turns,
            keep_budget=self._meter.keep_budget(session),
        )
        if split == 0:
            raise NothingToCompact
        earlier = context.summary
        summary = await self._summarise(session, control, turn, earlier, chat[:split], focus)
        kept = chat[split:]
        facts = Compaction(  # tokens_after: counted below, with the marker in place
            keep_from=kept[0].id if kept else None,
            tokens_before=before,
            tokens_after=0,
            focus=focus or None,
        )
        marker = Message(
            id=self._ids.message_id(),
            role=Role.ASSISTANT,
            content=(TextBlock(text=summary),),
            created_at=self._clock.now(),
            kind=MessageKind.COMPACTION,
            compaction=facts,
        )
        after = context_estimate([*session.messages, marker], overhead=overhead)
        marker = replace(marker, compaction=replace(facts, tokens_after=after))
        await self._log.append(session, marker)
        await self._sink.emit(session.id, Notice(message_id=marker.id, text=notice(marker)))
        await self._sink.emit(session.id, self._meter.report(session, after))
        return Compacted(tokens_before=before, tokens_after=after)

    async def _summarise(
        self,
        session: Session,
        control: TurnControl,
        turn: Turn,
        earlier: str | None,
        messages: list[Message],
        focus: str | None,
    ) -> str:
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
                    content=(TextBlock(text=f"{text}\n\n---\n\n{instruction(focus)}"),),
                    created_at=self._clock.now(),
                ),
            ),
            max_tokens=SUMMARY_MAX_TOKENS,
        )
        try:
            response = await control.guard(self._complete(request))
        except ModelError as exc:
            raise CompactionFailed(str(exc)) from exc
        cost = self._meter.cost(request.model, response.usage)
        turn.add_usage(response.usage, cost)
        session.charge(response.usage, cost)
        summary = "".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
        if not summary:
            raise CompactionFailed("the model wrote no summary")
        return summary

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        async for event in self._llm.stream(request):
            if isinstance(event, ModelResponse):
                return event
        raise CompactionFailed("the summary stream ended without a complete response")


def notice(marker: Message) -> str:
    """What the client is shown where a compaction happened (live and on load)."""
    assert marker.compaction is not None
    return f"\n\n{marker.compaction.notice}\n\n"
