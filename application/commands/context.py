"""Commands about what the model sees: /compact and /clear."""

from application.agent_loop.model_request import RequestBuilder
from application.compaction.compactor import CompactionFailed, Compactor, NothingToCompact
from application.compaction.context_meter import ContextMeter
from application.history.session_log import SessionLog
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.runtime.command_registry import CommandInput
from domain.commands import CommandSpec
from domain.content import TextBlock
from domain.events import Notice, PlanUpdated
from domain.message import Message, MessageKind, Role

CLEARED = (
    "Context cleared: the model sees nothing before this point. The earlier messages stay "
    "in the session's history."
)


class CompactCommand:
    spec = CommandSpec(
        name="compact",
        description="Summarise the conversation so far to free the model's context",
        hint="what the summary should focus on (optional)",
    )

    def __init__(
        self, *, compactor: Compactor, meter: ContextMeter, requests: RequestBuilder
    ) -> None:
        self._compactor = compactor
        self._meter = meter
        self._requests = requests

    async def run(self, command: CommandInput) -> str:
        session = command.session
        overhead = self._requests.overhead(session)
        try:
            await self._compactor.compact(
                session,
                command.control,
                command.turn,
                before=self._meter.estimate(session, overhead=overhead),
                overhead=overhead,
                focus=command.argument or None,
            )
        except NothingToCompact:
            turns = self._meter.policy.keep_turns
            return (
                f"Nothing to compact yet: the context holds no more than the last {turns} "
                "turns, which compaction keeps as they are."
            )
        except CompactionFailed as exc:
            return f"Compaction failed ({exc}). Nothing changed: the context is as it was."
        return ""  # the compactor showed its notice


class ClearCommand:
    spec = CommandSpec(
        name="clear",
        description="Start a fresh context: the model forgets the conversation so far",
    )

    def __init__(
        self,
        *,
        log: SessionLog,
        sink: EventSink,
        clock: Clock,
        meter: ContextMeter,
        requests: RequestBuilder,
    ) -> None:
        self._log = log
        self._sink = sink
        self._clock = clock
        self._meter = meter
        self._requests = requests

    async def run(self, command: CommandInput) -> str:
        session = command.session
        marker = Message(
            id=command.reply_id,
            role=Role.ASSISTANT,
            content=(TextBlock(text=CLEARED),),
            created_at=self._clock.now(),
            kind=MessageKind.CLEAR,
        )
        await self._log.append(session, marker)
        await self._sink.emit(session.id, Notice(message_id=marker.id, text=CLEARED))
        await self._sink.emit(session.id, PlanUpdated(entries=()))  # the plan went with it
        used = self._meter.estimate(session, overhead=self._requests.overhead(session))
        await self._sink.emit(session.id, self._meter.report(session, used))
        return ""
