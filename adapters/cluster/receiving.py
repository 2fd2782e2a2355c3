"""Receiving the live updates of sessions this replica follows for its clients (issue 32).

A follower delivers each session's updates in `seq` order, once: one it has is skipped,
and a gap (a lost notification, an attach racing a turn, a number sent alone) is filled
from the journal, waiting for the sender's next flush if need be. The first number it
expects is the journal's head when it began to follow the session (following.py):
what an attaching client missed before that comes from its replay. A while after a burst
ends the journal's head is read once more, since a lost last notification has no later one
to show its gap; and a follower whose listening connection was lost reads the journal again
once it listens (and once more a little later, for what was not flushed yet).

A number can be given twice: a replica that dies shows its followers updates its journal
had not written yet, and the session's next numberer (the replica telling the turn ended,
or running the next turn) numbers after what is written. So an update another replica sends
with a number the follower has from a different sender is not a duplicate (one update is
only ever sent by the replica that numbered it): it is delivered, and what follows it is
expected after it.
"""

import asyncio
import json
import logging
from typing import Any

from adapters.cluster.relaying import Relaying
from adapters.cluster.routes import Inbound, Offered
from adapters.cluster.signal_messages import decoded_signal

log = logging.getLogger(__name__)

_CATCH_UP_PAUSES = (0.0, 1.0, 3.0)  # after a resync: now, and after the senders flush


class Receiver:
    def __init__(self, relaying: Relaying) -> None:
        self._routes = relaying.routes
        self._channels = relaying.channels
        self._journal = relaying.journal
        self._store = relaying.store
        self._terms = relaying.terms
        self._spawn = relaying.spawn

    def on_updates(self, payload: str) -> None:
        """A notification of updates on this replica's channel."""
        message = decoded_signal(payload, "update", "u")
        if message is None:
            return
        sender = message.get("r") if isinstance(message.get("r"), str) else None
        for entry in message["u"]:
            route = self._routes.get(entry[0])
            if route is None or route.inbound is None:
                continue  # no client here follows it (any more)
            params = entry[2] if len(entry) > 2 else None
            self._offer(entry[0], route.inbound, (entry[1], params, sender))

    def resync(self) -> None:
        """Signals may have been lost: read the journal now, and again once the senders
        have flushed what they held."""
        for session_id, route in list(self._routes.items()):
            if route.inbound is not None:
                self._spawn(self._catch_up(session_id, route.inbound))

    def _offer(self, session_id: str, inbound: Inbound, offered: Offered) -> None:
        inbound.queue.append(offered)
        if inbound.worker is None or inbound.worker.done():
            inbound.worker = self._spawn(self._deliver_in_order(session_id, inbound))

    async def _catch_up(self, session_id: str, inbound: Inbound) -> None:
        for pause in _CATCH_UP_PAUSES:
            await asyncio.sleep(pause)
            try:
                newest = await self._store.newest(session_id)
            except Exception as exc:
                log.warning("session %s: journal not readable yet: %s", session_id, exc)
                continue
            if newest > inbound.last:
                self._offer(session_id, inbound, (newest, None, None))

    async def _deliver_in_order(self, session_id: str, inbound: Inbound) -> None:
        if inbound.tail_check is not None:
            inbound.tail_check.cancel()
        try:
            await self._deliver_queued(session_id, inbound)
        finally:
            inbound.tail_check = asyncio.get_running_loop().call_later(
                self._terms.tail_check_seconds,
                lambda: self._spawn(self._check_tail(session_id, inbound)),
            )

    async def _check_tail(self, session_id: str, inbound: Inbound) -> None:
        inbound.tail_check = None
        route = self._routes.get(session_id)
        if route is None or route.inbound is not inbound:
            return  # no longer followed
        try:
            newest = await self._store.newest(session_id)
        except Exception as exc:  # the next update, or a resync, shows the gap
            log.warning("session %s: journal not readable: %s", session_id, exc)
            return
        if newest > inbound.last:
            self._offer(session_id, inbound, (newest, None, None))

    async def _deliver_queued(self, session_id: str, inbound: Inbound) -> None:
        while inbound.queue:
            seq, params, sender = inbound.queue.popleft()
            again = False
            if seq <= inbound.last:
                if params is None or not _given_again(inbound, sender):
                    continue  # delivered already (or numbered here)
                log.warning(
                    "session %s: replica %s numbered again from %d (replica %s's updates "
                    "from there were never written)",
                    session_id,
                    sender,
                    seq,
                    inbound.by,
                )
                inbound.last, again = seq - 1, True
            if seq > inbound.last + 1 or params is None:
                await self._fill(session_id, inbound, seq if params is None else seq - 1)
            if params is not None and seq == inbound.last + 1:
                await self._deliver(session_id, inbound, seq, params, sender, again=again)

    async def _fill(self, session_id: str, inbound: Inbound, through: int) -> None:
        """Deliver the journal's updates after `inbound.last` through `through`, waiting
        for them to be written; what never is within the patience is given up (its
        sender died before writing it)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self._terms.fill_patience
        pause = 0.02
        while inbound.last < through:
            await self._deliver_written(session_id, inbound, through)
            if inbound.last >= through:
                return
            if loop.time() > give_up:
                log.warning(
                    "session %s: updates %d..%d never reached the journal",
                    session_id,
                    inbound.last + 1,
                    through,
                )
                inbound.last = through
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def _deliver_written(self, session_id: str, inbound: Inbound, through: int) -> None:
        """Deliver what the journal holds of the gap, in order, as far as it goes."""
        try:
            window = await self._store.window(session_id, inbound.last, through - inbound.last)
        except Exception as exc:
            log.warning("session %s: journal not readable: %s", session_id, exc)
            return
        for update in window.updates:
            if update.seq == inbound.last + 1:
                params = json.loads(update.params)
                await self._deliver(session_id, inbound, update.seq, params, None)

    async def _deliver(
        self,
        session_id: str,
        inbound: Inbound,
        seq: int,
        params: dict[str, Any],
        sender: str | None,
        *,
        again: bool = False,
    ) -> None:
        inbound.last, inbound.by = seq, sender
        self._journal.follow_on(session_id, seq)  # a turn here numbers after it
        try:
            await self._channels.deliver_relayed(session_id, params, numbered_again=again)
        except Exception:
            log.exception("session %s: a relayed update was not delivered", session_id)


def _given_again(inbound: Inbound, sender: str | None) -> bool:
    """Whether a number the follower has, sent now by `sender`, was given a second time:
    what it has under that number another replica sent."""
    return sender is not None and inbound.by is not None and sender != inbound.by
