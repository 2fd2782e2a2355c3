"""A queue lost with the process that held it (a restart, a replica's death): the clients
that come back are told, once, and shown the queue empty. The queue itself is never
rebuilt, so no queued prompt ever runs twice.

What the queue last was is read from the session journal: every change of a queue is a
`session_info_update` it keeps (`_meta.iac_code.queue`)."""

import logging
from typing import Any

from adapters.protocol.journal import UpdateJournal
from adapters.protocol.replicas import HeldElsewhere
from adapters.protocol.use_cases import UseCases
from application.errors import ApplicationError
from application.notices.telling import Severity

log = logging.getLogger(__name__)

# How a stored queue update reads: both pieces are in its JSON text.
_PIECES = ('"sessionUpdate":"session_info_update"', '"queue":[')


class DroppedQueues:
    def __init__(
        self,
        use_cases: UseCases,
        journal: UpdateJournal,
        held_elsewhere: HeldElsewhere | None = None,
    ) -> None:
        self._uc = use_cases
        self._journal = journal
        self._held_elsewhere = held_elsewhere
        self._checking: set[str] = set()  # one check at a time per session

    async def check(self, session_id: str) -> None:
        """A client has just attached: tell every attached client about a queue nobody
        holds any more. Nothing to tell while a queue or a turn lives (here or elsewhere)."""
        if session_id in self._checking or self._uc.queue().holds(session_id):
            return
        self._checking.add(session_id)
        try:
            await self._tell_lost(session_id)
        except ApplicationError as exc:  # the store is down: the attach itself went well
            log.warning("could not look for a dropped queue of %s: %s", session_id, exc)
        finally:
            self._checking.discard(session_id)

    async def _tell_lost(self, session_id: str) -> None:
        lost = queue_in(await self._journal.newest_containing(session_id, *_PIECES))
        if not lost or self._uc.queue().holds(session_id):
            return
        if self._held_elsewhere is not None and await self._held_elsewhere(session_id):
            return
        await self._uc.tell()(session_id, Severity.WARNING, "queue dropped", _told(lost))
        await self._uc.queue().show_empty(session_id)


def queue_in(update: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The queue a stored `session_info_update` showed ([] for anything else)."""
    meta = ((update or {}).get("update") or {}).get("_meta") or {}
    queue = (meta.get("iac_code") or {}).get("queue") if isinstance(meta, dict) else None
    return [e for e in queue if isinstance(e, dict)] if isinstance(queue, list) else []


def _told(lost: list[dict[str, Any]]) -> str:
    shown = "; ".join(f"“{e.get('preview', '')}” (from {e.get('queuedBy', '?')})" for e in lost)
    count = f"{len(lost)} queued prompt{'s' if len(lost) != 1 else ''}"
    return (
        f"The agent restarted and dropped {count}, which never ran: {shown}. "
        "Send them again to run them."
    )
