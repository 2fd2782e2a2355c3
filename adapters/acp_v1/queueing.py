"""Whether a client asked for its prompts to be queued, and the slash command that shows
the queue beside a running turn."""

from typing import Any

from domain.commands import invocation_in
from domain.content import UserInputBlock

QUEUE_COMMAND = "queue"


def queues_prompts(capabilities: Any) -> bool:
    """`clientCapabilities._meta.iac_code.promptQueueing: true`, or the proposal's name,
    `promptQueueing: true` or `{}`, at the top or in `_meta`. Anything else: prompts are
    refused while busy, as without queueing."""
    if not isinstance(capabilities, dict):
        return False
    meta = capabilities.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    ours = meta.get("iac_code")
    if isinstance(ours, dict) and ours.get("promptQueueing") is True:
        return True
    return any(_says_yes(where.get("promptQueueing")) for where in (capabilities, meta))


def _says_yes(value: Any) -> bool:
    return value is True or isinstance(value, dict)


def queue_command(content: tuple[UserInputBlock, ...]) -> str | None:
    """The argument of a `/queue` prompt ("" or "clear", as typed); None: not one."""
    invocation = invocation_in(content)
    if invocation is None:
        return None
    call = invocation.call({QUEUE_COMMAND})
    return call.argument if call is not None else None
