"""A sub-agent's turn, made of the same pieces as a session's: the agent loop (ModelTurn:
streamed replies, provider retries, compaction, the tool rounds), with what is the child's
own put in their place."""

from collections.abc import Callable
from dataclasses import dataclass

from application.agent_loop.context_room import ContextRoom
from application.agent_loop.model_request import RequestBuilder, TurnLimits
from application.agent_loop.model_turn import ModelTurn
from application.agent_loop.parts import ModelSide, TurnOutput
from application.agent_loop.provider_retry import ProviderRetry, RetryTerms
from application.agent_loop.reply_stream import ReplyStream
from application.compaction.compactor import Compactor
from application.compaction.context_meter import ContextMeter
from application.history.session_log import SessionLog
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient
from application.ports.tracing import Tracer
from application.ports.unit_of_work import UnitOfWork
from application.subagents.child_gate import ChildGate
from application.subagents.child_seat import ChildSeat
from application.subagents.child_tools import RunnerCalls
from application.tools.call_log import ToolCallLog
from application.tools.execution import ToolExecution
from application.tools.phase import ToolPhase
from domain.config import Catalog


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildModel:
    """The model side every child's turn shares with the session's: the model client (a
    reply streamed, asked again on `retry`'s terms), the one a compaction's summary asks,
    the models' catalogue, the turn's limits and the context meter."""

    llm: LLMClient
    summaries: LLMClient
    catalog: Catalog
    limits: TurnLimits
    meter: ContextMeter
    retry: RetryTerms


_RUNNER_CALLS = RunnerCalls()


class ChildTurns:
    """Makes each child's turn. Its messages, tool calls and turn are stored in its own
    session, through units of work of its own: children started together store at once,
    and a unit of work holds one transaction at a time."""

    def __init__(
        self,
        *,
        model: ChildModel,
        uow: Callable[[], UnitOfWork],
        clock: Clock,
        ids: IdGenerator,
        tracer: Tracer,
    ) -> None:
        self._model = model
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._tracer = tracer

    @property
    def limits(self) -> TurnLimits:
        return self._model.limits

    def turn(self, seat: ChildSeat) -> ModelTurn:
        shared = self._model
        requests = RequestBuilder(
            catalog=shared.catalog, tools=seat.tools, limits=shared.limits, prompt=seat.prompt
        )
        model = ModelSide(llm=shared.llm, requests=requests, meter=shared.meter)
        output = self._output(seat.output)
        calls = ToolCallLog(sink=seat.output, uow=self._uow())
        return ModelTurn(
            model=model,
            output=output,
            tools=self._tools(seat, calls),
            room=ContextRoom(model=model, compactor=self._compactor(output), output=output),
            replies=ReplyStream(
                model=model,
                output=output,
                calls=calls,
                tracer=self._tracer,
                retry=ProviderRetry(
                    terms=shared.retry, sink=seat.output, clock=self._clock, ids=self._ids
                ),
            ),
        )

    def _output(self, sink: EventSink) -> TurnOutput:
        log = SessionLog(uow=self._uow(), sink=sink)
        return TurnOutput(log=log, sink=sink, clock=self._clock, ids=self._ids)

    def _tools(self, seat: ChildSeat, calls: ToolCallLog) -> ToolPhase:
        return ToolPhase(
            tools=seat.tools,
            calls=calls,
            gate=ChildGate(calls=calls, route=seat.route),
            execution=ToolExecution(
                tools=seat.tools, calls=calls, own=_RUNNER_CALLS, watch=_RUNNER_CALLS
            ),
            tracer=self._tracer,
        )

    def _compactor(self, output: TurnOutput) -> Compactor:
        return Compactor(
            llm=self._model.summaries,
            log=output.log,
            sink=output.sink,
            clock=self._clock,
            ids=self._ids,
            meter=self._model.meter,
        )
