"""A session's live updates to the clients attached on other replicas (issue 32).

`ClusterRelay` composes three parts that share one map of routes (routes.py) and the rest
of what they work with (relaying.py), each explained where it lives:

- who follows what, the heartbeat and sweeping a dead replica: following.py (and
  sweeping.py for the turns the dead replica was running);
- sending a session's updates to the replicas that follow it: sending.py;
- receiving, in order and once, the updates of sessions followed here: receiving.py.

It registers itself with the room as it starts: the room says when a client here joins or
leaves a session, and asks whether clients elsewhere follow one.
"""

import asyncio
import contextlib
import logging
from typing import Any

from adapters.cluster.following import Followers
from adapters.cluster.receiving import Receiver
from adapters.cluster.relaying import Relaying
from adapters.cluster.routes import ATTACHED_CHANNEL, updates_channel
from adapters.cluster.sending import Sender
from application.attachments.turn_state import TurnState
from application.ports.cluster_signals import Unsubscribe

log = logging.getLogger(__name__)


class ClusterRelay:
    def __init__(self, relaying: Relaying) -> None:
        self._relaying = relaying
        self._me = relaying.replica_id
        self._unsubscribe: list[Unsubscribe] = []
        self._sender_task: asyncio.Task[None] | None = None
        self._heart: asyncio.Task[None] | None = None
        self._started = False
        self._receiver = Receiver(relaying)
        self._followers = Followers(relaying, catch_up=self._receiver.resync)
        self._sender = Sender(relaying)

    # -- the life of it --------------------------------------------------------------------

    async def start(self) -> None:
        """Listen, say this replica is alive, learn who follows what, and beat."""
        self._started = True
        relaying, followers, receiver = self._relaying, self._followers, self._receiver
        room = relaying.room
        room.on_joined(lambda session_id, _: self.joined(session_id))
        room.on_left(lambda session_id, _: self.left(session_id, len(room.peers_of(session_id))))
        room.followed_elsewhere_by(self.followed_elsewhere)
        signals = relaying.signals
        self._unsubscribe.append(
            await signals.subscribe(ATTACHED_CHANNEL, followers.on_attached, followers.resync_map)
        )
        self._unsubscribe.append(
            await signals.subscribe(updates_channel(self._me), receiver.on_updates, receiver.resync)
        )
        await relaying.registry.renew(self._me, relaying.now(), relaying.terms.lease_seconds)
        await followers.reload_map()
        loop = asyncio.get_running_loop()
        self._sender_task = loop.create_task(self._sender.run())
        self._heart = loop.create_task(followers.beat())

    async def aclose(self) -> None:
        if not self._started:
            return
        self._started = False
        await self._relaying.cancel_tasks(self._heart, self._sender_task)
        for unsubscribe in self._unsubscribe:
            with contextlib.suppress(Exception):
                await unsubscribe()
        try:
            await self._relaying.registry.leave(self._me)
        except Exception as exc:  # its lease lapses instead
            log.warning("replica %s could not leave the registry: %s", self._me, exc)

    # -- this replica's clients come and go (the room's listeners) ------------------------

    def joined(self, session_id: str) -> None:
        """A client here attached to the session: follow it (once), and say so."""
        if self._started:
            self._followers.joined(session_id)

    def followed_elsewhere(self, session_id: str) -> bool:
        return self._followers.followed_elsewhere(session_id)

    def left(self, session_id: str, clients_left: int) -> None:
        if self._started:
            self._followers.left(session_id, clients_left)

    async def watch(self, session_id: str) -> TurnState | None:
        """Follow the session before a client's replay is read (so that nothing between
        the replay and the live updates is missed); the turn as another replica runs it."""
        if not self._started:
            return None
        return await self._followers.watch(session_id)

    # -- the streaming path ----------------------------------------------------------------

    def forward(self, session_id: str, params: dict[str, Any]) -> None:
        """A numbered update (no await: the turn never waits); one dict lookup for a
        session nobody else follows."""
        route = self._relaying.routes.get(session_id)
        if route is not None:
            self._sender.forward(route, session_id, params)
