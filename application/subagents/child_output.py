"""Where a sub-agent's turn sends its events: to its parent's clients."""

from application.ports.event_sink import EventSink
from application.subagents.child_run import ChildRun
from domain.events import AgentEvent, ToolCallStarted, ToolCallUpdated
from domain.ids import SessionId


class ChildOutput(EventSink):
    """Every event of the child's turn goes to its parent's clients addressed to the child
    (those that show sub-agents show it as the child's session); each tool call it makes,
    once taken up with its input, is also a line in the parent's call (what the others
    see of it)."""

    def __init__(self, *, run: ChildRun) -> None:
        self._run = run

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        await self._run.tell_child(event)
        if (title := _taken_up(event)) is not None:
            await self._run.line(f"- {title}\n")


def _taken_up(event: AgentEvent) -> str | None:
    """The title of a call shown with its input: at once, or as the update of a call shown
    while the model was still writing it (which has no input yet)."""
    if isinstance(event, ToolCallStarted | ToolCallUpdated) and event.arguments is not None:
        return event.title
    return None
