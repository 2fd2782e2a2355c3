"""Whether a client asked for its prompts to be queued, and the slash command that shows
the queue beside a running turn."""

from typing import Any

from domain.commands import invocation_in
from domain.content import UserInputBlock

QUEUE_COMMAND = "queue"


def queues_prompts(capabilities: Any) -> bool:
    """`clientCapabilities._meta.iac_code.promptQueueing: true`, or the proposal's name at
    the top: `promptQueueing: true` or `{}`. Anything else: prompts are refused while busy,
    as without queueing."""
    if not isinstance(capabilities, dict):
        return False
    proposal = capabilities.get("promptQueueing")
    if proposal is True or isinstance(proposal, dict):
        return True
    meta = capabilities.get("_meta")
    ours = meta.get("iac_code") if isinstance(meta, dict) else None
    return isinstance(ours, dict) and ours.get("promptQueueing") is True


def queue_command(content: tuple[UserInputBlock, ...]) -> str | None:
    """The argument of a `/queue` prompt ("" or "clear", as typed); None: not one."""
    invocation = invocation_in(content)
    if invocation is None:
        return None
    call = invocation.call({QUEUE_COMMAND})
    return call.argument if call is not None else None
