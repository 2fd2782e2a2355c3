"""A session's live updates to the clients attached on other replicas (issue 32).

`ClusterRelay` composes three parts that share one map of routes (relay_routes.py), each
explained where it lives:

- who follows what, the heartbeat and sweeping a dead replica: relay_followers.py (and
  relay_sweeping.py for the turns the dead replica was running);
- sending a session's updates to the replicas that follow it: relay_sending.py;
- receiving, in order and once, the updates of sessions followed here: relay_receiving.py.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Any

from adapters.protocol.journal import UpdateJournal
from adapters.protocol.relay_followers import RelayFollowers
from adapters.protocol.relay_receiving import RelayReceiver
from adapters.protocol.relay_routes import (
    ATTACHED_CHANNEL,
    UPDATES_PREFIX,
    Inbound,
    RelayTerms,
    Route,
    updates_channel,
)
from adapters.protocol.relay_sending import RelaySender
from application.attachments.turn_state import TurnState
from application.ports.cluster_attachments import ClusterAttachments
from application.ports.cluster_signals import ClusterSignals, Unsubscribe
from application.ports.leases import TurnLeases
from application.ports.update_journal import UpdateJournalStore

if TYPE_CHECKING:
    from adapters.protocol.channels import SessionChannels

__all__ = [
    "ATTACHED_CHANNEL",
    "UPDATES_PREFIX",
    "ClusterRelay",
    "Inbound",
    "RelayTerms",
    "Route",
    "updates_channel",
]

log = logging.getLogger(__name__)


class ClusterRelay:
    def __init__(
        self,
        *,
        replica_id: str,
        channels: "SessionChannels",
        journal: UpdateJournal,
        store: UpdateJournalStore,
        registry: ClusterAttachments,
        signals: ClusterSignals,
        leases: TurnLeases,
        now: Callable[[], datetime],
        terms: RelayTerms | None = None,
    ) -> None:
        terms = terms or RelayTerms()
        self._me = replica_id
        self._channels = channels
        self._registry = registry
        self._signals = signals
        self._now = now
        self._terms = terms
        self.routes: dict[str, Route] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: list[Unsubscribe] = []
        self._sender_task: asyncio.Task[None] | None = None
        self._heart: asyncio.Task[None] | None = None
        self._started = False
        self._receiver = RelayReceiver(
            routes=self.routes,
            channels=channels,
            journal=journal,
            store=store,
            terms=terms,
            spawn=self._spawn,
        )
        self._followers = RelayFollowers(
            replica_id=replica_id,
            routes=self.routes,
            channels=channels,
            journal=journal,
            store=store,
            registry=registry,
            signals=signals,
            leases=leases,
            now=now,
            terms=terms,
            spawn=self._spawn,
            catch_up=self._receiver.resync,
        )
        self._sender = RelaySender(
            replica_id=replica_id, journal=journal, signals=signals, terms=terms
        )

    # -- the life of it --------------------------------------------------------------------

    async def start(self) -> None:
        """Listen, say this replica is alive, learn who follows what, and beat."""
        self._started = True
        self._channels.relay_through(self)
        followers, receiver = self._followers, self._receiver
        self._unsubscribe.append(
            await self._signals.subscribe(
                ATTACHED_CHANNEL, followers.on_attached, followers.resync_map
            )
        )
        self._unsubscribe.append(
            await self._signals.subscribe(
                updates_channel(self._me), receiver.on_updates, receiver.resync
            )
        )
        await self._registry.renew(self._me, self._now(), self._terms.lease_seconds)
        await followers.reload_map()
        loop = asyncio.get_running_loop()
        self._sender_task = loop.create_task(self._sender.run())
        self._heart = loop.create_task(followers.beat())

    async def aclose(self) -> None:
        if not self._started:
            return
        self._started = False
        await self._cancel_tasks()
        for unsubscribe in self._unsubscribe:
            with contextlib.suppress(Exception):
                await unsubscribe()
        try:
            await self._registry.leave(self._me)
        except Exception as exc:  # its lease lapses instead
            log.warning("replica %s could not leave the registry: %s", self._me, exc)

    async def _cancel_tasks(self) -> None:
        tasks = [t for t in (self._heart, self._sender_task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

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

    def forward(self, route: Route, session_id: str, params: dict[str, Any]) -> None:
        """A numbered update of a session others follow (no await: the turn never waits)."""
        self._sender.forward(route, session_id, params)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> "asyncio.Task[Any]":
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
