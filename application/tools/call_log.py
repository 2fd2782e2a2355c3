"""What the client is shown of each tool call, and the record stored when it ends."""

import asyncio
from dataclasses import replace

from application.ports.event_sink import EventSink
from application.ports.tools import ToolResult
from application.ports.unit_of_work import UnitOfWork
from application.runtime.turn_control import TurnControl
from domain.content import ToolResultBlock
from domain.events import PlanUpdated, ToolCallStarted, ToolCallUpdated
from domain.ids import ToolCallId
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus
from domain.tools import spec_for

NOT_RUN = "Not run: the turn was cancelled."

CallEvent = ToolCallStarted | ToolCallUpdated | PlanUpdated


class ToolCallLog:
    """Shows a session's tool calls as they go, and stores each as it ends.

    - A call the model has begun to write is shown at once (announced), without its
      input; it is updated when it is taken up, or settled as cancelled if it never is.
    - A call ends with one update (its status and output) and its record, stored in its
      own short transaction; the model gets the result block.
    """

    def __init__(self, *, sink: EventSink, uow: UnitOfWork) -> None:
        self._sink = sink
        self._uow = uow
        # Sub-agents started together end at any moment, together too; one unit of work
        # holds one transaction at a time.
        self._storing = asyncio.Lock()

    async def announce(
        self, session: Session, control: TurnControl, call_id: str, name: str
    ) -> None:
        """Show a call the model has begun to write: its input is not there yet."""
        if call_id in control.announced:
            return
        control.announced.add(call_id)
        await self.emit(
            session,
            ToolCallStarted(
                tool_call_id=ToolCallId(call_id),
                title=name,
                kind=spec_for(name).kind,
                arguments=None,
                name=name,
            ),
        )

    async def settle_announced(self, session: Session, control: TurnControl) -> None:
        """Calls shown early that will not run (the turn was cancelled, the stream broke):
        the client is told they failed rather than left pending."""
        for call_id in sorted(control.announced):
            await self.emit(
                session,
                ToolCallUpdated(tool_call_id=ToolCallId(call_id), status=ToolCallStatus.CANCELLED),
            )
        control.announced.clear()

    async def show(self, session: Session, control: TurnControl, call: ToolCallRecord) -> None:
        """The call with its input: an update of the one shown early, else shown now."""
        if call.id in control.announced:
            control.announced.discard(call.id)
            shown: ToolCallStarted | ToolCallUpdated = ToolCallUpdated(
                tool_call_id=call.id,
                title=call.title,
                locations=call.locations,
                arguments=call.arguments,
            )
        else:
            shown = ToolCallStarted(
                tool_call_id=call.id,
                title=call.title,
                kind=call.kind,
                arguments=call.arguments,
                locations=call.locations,
                name=call.name,
            )
        await self.emit(session, shown)

    async def emit(self, session: Session, event: CallEvent) -> None:
        await self._sink.emit(session.id, event)

    async def finish(
        self, session: Session, call: ToolCallRecord, status: ToolCallStatus, result: ToolResult
    ) -> ToolResultBlock:
        output = result.output or (TextOutput(text=result.text),)
        raw = dict(result.raw_output) or {"result": result.text, "isError": result.is_error}
        await self.emit(
            session,
            ToolCallUpdated(tool_call_id=call.id, status=status, output=output, raw_output=raw),
        )
        record = replace(call, status=status, output=output, raw_output=raw)
        async with self._storing, self._uow as uow:
            await uow.activity.record_tool_call(session.id, record)
            await uow.commit()
        return ToolResultBlock(tool_use_id=call.id, content=result.text, is_error=result.is_error)

    async def fail(self, session: Session, call: ToolCallRecord, reason: str) -> ToolResultBlock:
        """The call fails without running: the model is told `reason`."""
        result = ToolResult(text=reason, is_error=True)
        return await self.finish(session, call, ToolCallStatus.FAILED, result)

    async def not_run(self, session: Session, call: ToolCallRecord) -> ToolResultBlock:
        """The call ends unrun because the turn is cancelled."""
        result = ToolResult(text=NOT_RUN, is_error=True)
        return await self.finish(session, call, ToolCallStatus.CANCELLED, result)
