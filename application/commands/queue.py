"""/queue: the prompts waiting behind the running turn; `/queue clear` drops them."""

from application.runtime.command_registry import CommandInput
from application.runtime.queueing import QueuePrompts
from domain.commands import CommandSpec

USAGE = (
    "Usage: `/queue` shows the prompts waiting behind the running turn, `/queue clear` drops them."
)


class QueueCommand:
    spec = CommandSpec(
        name="queue",
        description="Show the prompts waiting behind the running turn (`clear`: drop them)",
        hint="clear",
    )

    def __init__(self, *, queue: QueuePrompts) -> None:
        self._queue = queue

    async def run(self, command: CommandInput) -> str:
        return await queue_report(self._queue, command.session.id, command.argument)


async def queue_report(queue: QueuePrompts, session_id: str, argument: str) -> str:
    """What `/queue [clear]` answers; also run beside a turn, where no command can begin one
    (adapters/protocol/agent.py)."""
    match argument.strip().lower():
        case "clear":
            dropped = await queue.clear(session_id)
            if not dropped:
                return "No prompts are queued."
            return f"Dropped {dropped} queued prompt{'s' if dropped != 1 else ''}."
        case "":
            entries = queue.entries(session_id)
            if not entries:
                return "No prompts are queued."
            lines = [f"{len(entries)} queued behind the running turn, oldest first:"]
            lines += [
                f"{n}. “{e.preview}” (from {e.queued_by}, id {e.id})"
                for n, e in enumerate(entries, 1)
            ]
            return "\n".join(lines)
        case _:
            return USAGE
