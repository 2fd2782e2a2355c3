"""Who follows what across replicas (issue 32).

Each replica keeps, in the database (application.ports.cluster_attachments), how many of
its clients are attached to each session, and says so on the `iac_code_at` channel when
that goes from none to some or back. Every replica holds the map in memory
(`Route.targets`), read again in full at each heartbeat, so a lost signal heals within
one. The heartbeat also renews this replica's row, says again the follows the database
missed, and sweeps replicas that stopped renewing theirs (sweeping.py).
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable

from adapters.cluster.relaying import Relaying
from adapters.cluster.routes import ATTACHED_CHANNEL, Inbound, Route
from adapters.cluster.signal_messages import decoded_signal
from adapters.cluster.sweeping import DeadTurns
from application.attachments.turn_state import TurnPhase, TurnState
from domain.ids import SessionId

log = logging.getLogger(__name__)


class Followers:
    def __init__(self, relaying: Relaying, *, catch_up: Callable[[], None]) -> None:
        self._relaying = relaying
        self._me = relaying.replica_id
        self._routes = relaying.routes
        self._journal = relaying.journal
        self._store = relaying.store
        self._registry = relaying.registry
        self._now = relaying.now
        self._terms = relaying.terms
        self._spawn = relaying.spawn
        self._catch_up = catch_up  # read the journal after what each follow delivered
        self._dead_turns = DeadTurns(relaying)
        self._watching: dict[str, asyncio.Task[None]] = {}  # a follow being set up
        self._register = asyncio.Lock()
        self._unsaid: set[str] = set()  # followed here, not yet said (the database was out)
        self._said: dict[tuple[str, str], float] = {}  # follows others said lately, when

    # -- this replica's clients come and go (the room's listeners) ------------------------

    def joined(self, session_id: str) -> None:
        """A client here attached to the session: follow it (once), and say so."""
        route = self._routes.get(session_id)
        if (route is None or route.inbound is None) and session_id not in self._watching:
            self._watching[session_id] = self._spawn(self._follow(session_id))

    def followed_elsewhere(self, session_id: str) -> bool:
        route = self._routes.get(session_id)
        return route is not None and bool(route.targets)

    def left(self, session_id: str, clients_left: int) -> None:
        if clients_left == 0:
            self._spawn(self._unfollow(session_id))

    async def watch(self, session_id: str) -> TurnState | None:
        """Follow the session before a client's replay is read (so that nothing between
        the replay and the live updates is missed); the turn as another replica runs it."""
        self.joined(session_id)
        following = self._watching.get(session_id)
        if following is not None:
            await asyncio.shield(following)
        try:
            holder = await self._relaying.leases.live_holder(SessionId(session_id), self._now())
        except Exception as exc:
            log.warning("turn state of %s: lease not readable: %s", session_id, exc)
            return None
        return TurnState(TurnPhase.RUNNING) if holder not in (None, self._me) else None

    async def _follow(self, session_id: str) -> None:
        try:
            async with self._register:
                route = self._routes.setdefault(session_id, Route())
                if route.inbound is None:
                    await self._begin_following(session_id, route)
        except Exception as exc:  # the next beat says it again
            log.warning("cannot follow session %s across replicas: %s", session_id, exc)
        finally:
            self._watching.pop(session_id, None)

    async def _begin_following(self, session_id: str, route: Route) -> None:
        """Expect the journal's head next (what came before is the client's replay)."""
        head = max(
            await self._store.newest(session_id),
            self._journal.last_seq(session_id) or 0,
        )
        # Another replica may have numbered the session since this one did.
        self._journal.follow_on(session_id, head)
        route.inbound = Inbound(last=head)
        self._unsaid.add(session_id)
        await self._say_attached(session_id, 1)
        self._unsaid.discard(session_id)

    async def _unfollow(self, session_id: str) -> None:
        following = self._watching.get(session_id)
        if following is not None:
            await asyncio.shield(following)
        async with self._register:
            if self._relaying.attached_here(session_id):
                return  # another client came meanwhile
            route = self._routes.get(session_id)
            if route is None or route.inbound is None:
                return
            route.inbound = None
            if route.idle():
                del self._routes[session_id]
            with contextlib.suppress(Exception):
                await self._say_attached(session_id, 0)

    async def _say_attached(self, session_id: str, clients: int) -> None:
        await self._registry.attach(session_id, self._me, clients, self._now())
        change = {"s": session_id, "r": self._me, "n": clients}
        await self._relaying.signals.publish(ATTACHED_CHANNEL, json.dumps(change))

    # -- other replicas' follows -----------------------------------------------------------

    def on_attached(self, payload: str) -> None:
        """A replica's clients of a session went from none to some, or back."""
        change = decoded_signal(payload, "attachment", "s", "r", "n")
        if change is None:
            return
        session_id, replica, clients = change["s"], change["r"], change["n"]
        if replica == self._me:
            return
        if clients:
            self._routes.setdefault(session_id, Route()).targets.add(replica)
            self._said[(session_id, replica)] = asyncio.get_running_loop().time()
        else:
            self._no_longer_followed(session_id, replica)

    def _no_longer_followed(self, session_id: str, replica: str) -> None:
        self._said.pop((session_id, replica), None)
        route = self._routes.get(session_id)
        if route is not None:
            route.targets.discard(replica)
            if not route.targets:
                self._spawn(self._relaying.room.nobody_elsewhere(session_id))
            if route.idle():
                del self._routes[session_id]

    def resync_map(self) -> None:
        """Signals may have been lost: read the whole map again."""
        self._spawn(self.reload_map())

    async def reload_map(self) -> None:
        watchers = await self._registry.watchers(self._now())
        # A follow said while the map was being read may be missing from what was read.
        recent = asyncio.get_running_loop().time() - 2 * self._terms.renew_seconds
        for (session_id, replica), said_at in list(self._said.items()):
            if said_at < recent:
                del self._said[(session_id, replica)]
            else:
                watchers.setdefault(session_id, set()).add(replica)
        for session_id, route in list(self._routes.items()):
            route.targets = watchers.pop(session_id, set()) - {self._me}
            if route.idle():
                del self._routes[session_id]
        for session_id, replicas in watchers.items():
            others = replicas - {self._me}
            if others:
                self._routes[session_id] = Route(targets=others)

    # -- the heartbeat ---------------------------------------------------------------------

    async def beat(self) -> None:
        """Every renewal period, until cancelled."""
        while True:
            await asyncio.sleep(self._terms.renew_seconds)
            try:
                await self._beat_once()
            except Exception as exc:  # the database is away: the next beat tries again
                log.warning("replica %s: heartbeat failed: %s", self._me, exc)

    async def _beat_once(self) -> None:
        if not await self._registry.renew(self._me, self._now(), self._terms.lease_seconds):
            self._swept_while_slow()
        await self._say_followed_again()
        swept = await self._registry.sweep(self._now())
        if swept.replicas:
            log.warning("replicas %s stopped beating: swept", ", ".join(swept.replicas))
        await self.reload_map()
        self._drop_unattended()
        await self._dead_turns.settle(swept.interrupted)

    def _swept_while_slow(self) -> None:
        """Another replica took this one for dead: its follows are said again, and what
        the others stopped sending it meanwhile is read from the journal."""
        log.warning("replica %s was swept while slow: following its sessions again", self._me)
        self._unsaid.update(self._routes)
        self._catch_up()

    async def _say_followed_again(self) -> None:
        for session_id in list(self._unsaid):
            route = self._routes.get(session_id)
            if route is not None and route.inbound is not None:
                await self._say_attached(session_id, 1)
            self._unsaid.discard(session_id)

    def _drop_unattended(self) -> None:
        """Sessions followed for a client whose attach then failed: no longer followed."""
        for session_id, route in list(self._routes.items()):
            attended = self._relaying.attached_here(session_id) or session_id in self._watching
            if route.inbound is not None and not attended:
                self._spawn(self._unfollow(session_id))
