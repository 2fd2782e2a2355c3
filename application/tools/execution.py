"""Running an allowed tool call: its live output shown, its result recorded."""

from dataclasses import replace

from application.ports.tools import ChildPermit, ToolResult
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.tools.call_log import ToolCallLog
from application.tools.call_watch import CallWatch
from application.tools.outcome import Outcome
from application.tools.own_tools import OwnTools
from application.tools.toolbox import Toolbox
from domain.events import ToolCallUpdated
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolOutput

CANCELLED = "Cancelled by the user before the tool finished; its result was discarded."
PROGRESS_TAIL = 16_000  # characters of live output re-sent with each progress update


class ToolExecution:
    """Runs a call the turn allowed: one of the turn's own tools (OwnTools), or through the
    tool it names (Toolbox), watched (CallWatch).

    - The call is in progress while it runs; its output is streamed as it comes (the last
      PROGRESS_TAIL characters), or shown at once when the tool shows something itself.
    - Cancelling the turn stops the tool; its result is discarded.
    """

    def __init__(
        self, *, tools: Toolbox, calls: ToolCallLog, own: OwnTools, watch: CallWatch
    ) -> None:
        self._tools = tools
        self._calls = calls
        self._own = own
        self._watch = watch

    async def run(
        self,
        session: Session,
        control: TurnControl,
        call: ToolCallRecord,
        permit: ChildPermit,  # how a sub-agent's calls are asked about
    ) -> Outcome:
        if (own := await self._own.run(session, control, call)) is not None:
            return Outcome(result=own)
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        tail = ""

        async def progress(chunk: str | ToolOutput) -> None:
            nonlocal tail
            if not isinstance(chunk, str):  # e.g. the editor's terminal, shown at once
                await self._calls.emit(
                    session, ToolCallUpdated(tool_call_id=call.id, output=(chunk,))
                )
                return
            tail = (tail + chunk)[-PROGRESS_TAIL:]  # bounded: cost stays flat as output grows
            await self._calls.emit(
                session, ToolCallUpdated(tool_call_id=call.id, output=(TextOutput(text=tail),))
            )

        after = await self._watch.before(session, call)
        try:
            result = await control.guard(self._tools.run(session, call, progress, permit))
        except TurnCancelled:
            await after()  # what the agent left, even when cancelled
            cancelled = ToolResult(text=CANCELLED, is_error=True)
            block = await self._calls.finish(session, call, ToolCallStatus.CANCELLED, cancelled)
            return Outcome(result=block)
        await after()
        status = ToolCallStatus.FAILED if result.is_error else ToolCallStatus.COMPLETED
        if not result.is_error:
            result = replace(result, text=result.text + await self._watch.nested(session, call))
        block = await self._calls.finish(session, call, status, result)
        return Outcome(result=block, spent=result.usage)
