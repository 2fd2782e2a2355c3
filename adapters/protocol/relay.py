"""A session's live updates to the clients attached on other replicas (issue 32).

- Who follows what: each replica keeps, in the database (application.ports.
  cluster_attachments), how many of its clients are attached to each session, and says so
  on the `iac_code_at` channel when that goes from none to some or back. Every replica
  holds the map in memory (`Route.targets`), read again in full at each heartbeat, so a
  lost signal heals within one.
- Sending: `SessionChannels.emit` looks the session up in `routes` (one dict lookup, a
  miss on a single replica); an update of a session other replicas follow is queued, and
  one task sends the queue in order, many updates per NOTIFY, on each follower's own
  channel (`iac_code_up_<hash of its id>`). The turn never waits for it. An update too big
  for a notification is sent as its number alone, after the journal is flushed: the
  follower reads it from there.
- Receiving: a follower delivers each session's updates in `seq` order, once: one it has
  is skipped, and a gap (a lost notification, an attach racing a turn, a number sent
  alone) is filled from the journal, waiting for the sender's next flush if need be. The
  first number it expects is the journal's head when it began to follow the session:
  what an attaching client missed before that comes from its replay.
- Faults: a follower whose listening connection was lost reads the journal again once it
  listens (and once more a little later, for what was not flushed yet). A replica that
  stops renewing its row is swept by the first replica to notice: its attachments and turn
  leases go, and each session whose turn it was running gets an `interrupted` notice,
  numbered once and relayed to every follower like any update.
"""

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from adapters.protocol.journal import UpdateJournal, seq_of
from adapters.protocol.jsonrpc import encode
from application.attachments.turn_state import TurnPhase, TurnState
from application.ports.cluster_attachments import ClusterAttachments
from application.ports.cluster_signals import MAX_PAYLOAD, ClusterSignals, Unsubscribe
from application.ports.leases import TurnLeases
from application.ports.update_journal import UpdateJournalStore
from domain.events import Notice, NoticeSeverity, SessionNotice
from domain.ids import MessageId, SessionId

if TYPE_CHECKING:
    from adapters.protocol.channels import SessionChannels

log = logging.getLogger(__name__)

ATTACHED_CHANNEL = "iac_code_at"
UPDATES_PREFIX = "iac_code_up_"


def updates_channel(replica_id: str) -> str:
    """The channel a replica hears its sessions' updates on (ids may hold `-` and capitals,
    which a channel name may not)."""
    return UPDATES_PREFIX + hashlib.sha256(replica_id.encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayTerms:
    lease_seconds: float = 30.0  # a replica that stops renewing is swept after this
    fill_patience: float = 10.0  # how long a gap is waited for in the journal
    max_queued: int = 50_000  # unsent updates kept while publishing fails (then: gaps)
    # A follower reads the journal's head once this long after a burst of updates ends:
    # a lost last notification has no later one to show its gap.
    tail_check_seconds: float = 1.0

    @property
    def renew_seconds(self) -> float:
        return self.lease_seconds / 3


@dataclass(slots=True)
class Inbound:
    """A session this replica follows for its own clients: the newest number delivered."""

    last: int
    queue: deque[tuple[int, dict[str, Any] | None]] = field(default_factory=deque)
    worker: "asyncio.Task[None] | None" = None
    tail_check: asyncio.TimerHandle | None = None


@dataclass(slots=True)
class Route:
    """A session as the streaming path sees it: who else follows it, and whether we do."""

    targets: set[str] = field(default_factory=set)
    inbound: Inbound | None = None

    def idle(self) -> bool:
        return not self.targets and self.inbound is None


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
        self._me = replica_id
        self._channels = channels
        self._journal = journal
        self._store = store
        self._registry = registry
        self._signals = signals
        self._leases = leases
        self._now = now
        self._terms = terms or RelayTerms()
        self.routes: dict[str, Route] = {}
        self._watching: dict[str, asyncio.Task[None]] = {}  # a follow being set up
        self._outbox: list[tuple[str, str, int, dict[str, Any]]] = []
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: list[Unsubscribe] = []
        self._sender: asyncio.Task[None] | None = None
        self._heart: asyncio.Task[None] | None = None
        self._register = asyncio.Lock()
        self._dead_turns: dict[str, str] = {}  # session -> the dead holder of its turn
        self._unsaid: set[str] = set()  # followed here, not yet said (the database was out)
        self._said: dict[tuple[str, str], float] = {}  # follows others said lately, when
        self._owed: dict[str, dict[str, int]] = {}  # per follower: unsignalled newest seqs
        self._retrying = False
        self._started = False

    # -- the life of it --------------------------------------------------------------------

    async def start(self) -> None:
        """Listen, say this replica is alive, learn who follows what, and beat."""
        self._started = True
        self._channels.relay_through(self)
        self._unsubscribe.append(
            await self._signals.subscribe(ATTACHED_CHANNEL, self._on_attached, self._resync_map)
        )
        self._unsubscribe.append(
            await self._signals.subscribe(
                updates_channel(self._me), self._on_updates, self._resync_updates
            )
        )
        await self._registry.renew(self._me, self._now(), self._terms.lease_seconds)
        await self._reload_map()
        self._sender = asyncio.get_running_loop().create_task(self._send_loop())
        self._heart = asyncio.get_running_loop().create_task(self._beat())

    async def aclose(self) -> None:
        if not self._started:
            return
        self._started = False
        for task in (self._heart, self._sender, *self._tasks):
            if task is not None:
                task.cancel()
        for task in (self._heart, self._sender, *self._tasks):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for unsubscribe in self._unsubscribe:
            with contextlib.suppress(Exception):
                await unsubscribe()
        try:
            await self._registry.leave(self._me)
        except Exception as exc:  # its lease lapses instead
            log.warning("replica %s could not leave the registry: %s", self._me, exc)

    # -- this replica's clients come and go (the room's listeners) ------------------------

    def joined(self, session_id: str) -> None:
        """A client here attached to the session: follow it (once), and say so."""
        if not self._started:
            return
        route = self.routes.get(session_id)
        if (route is None or route.inbound is None) and session_id not in self._watching:
            self._watching[session_id] = self._spawn(self._follow(session_id))

    def followed_elsewhere(self, session_id: str) -> bool:
        route = self.routes.get(session_id)
        return route is not None and bool(route.targets)

    def left(self, session_id: str, clients_left: int) -> None:
        if self._started and clients_left == 0:
            self._spawn(self._unfollow(session_id))

    async def watch(self, session_id: str) -> TurnState | None:
        """Follow the session before a client's replay is read (so that nothing between
        the replay and the live updates is missed); the turn as another replica runs it."""
        if not self._started:
            return None
        self.joined(session_id)
        following = self._watching.get(session_id)
        if following is not None:
            await asyncio.shield(following)
        try:
            holder = await self._leases.live_holder(SessionId(session_id), self._now())
        except Exception as exc:
            log.warning("turn state of %s: lease not readable: %s", session_id, exc)
            return None
        return TurnState(TurnPhase.RUNNING) if holder not in (None, self._me) else None

    async def _follow(self, session_id: str) -> None:
        try:
            async with self._register:
                route = self.routes.setdefault(session_id, Route())
                if route.inbound is None:
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
        except Exception as exc:  # the next beat says it again
            log.warning("cannot follow session %s across replicas: %s", session_id, exc)
        finally:
            self._watching.pop(session_id, None)

    async def _unfollow(self, session_id: str) -> None:
        following = self._watching.get(session_id)
        if following is not None:
            await asyncio.shield(following)
        async with self._register:
            if self._channels.attached_here(session_id):
                return  # another client came meanwhile
            route = self.routes.get(session_id)
            if route is None or route.inbound is None:
                return
            route.inbound = None
            if route.idle():
                del self.routes[session_id]
            with contextlib.suppress(Exception):
                await self._say_attached(session_id, 0)

    async def _say_attached(self, session_id: str, clients: int) -> None:
        await self._registry.attach(session_id, self._me, clients, self._now())
        change = {"s": session_id, "r": self._me, "n": clients}
        await self._signals.publish(ATTACHED_CHANNEL, json.dumps(change))

    # -- who follows what ------------------------------------------------------------------

    def _on_attached(self, payload: str) -> None:
        try:
            change = json.loads(payload)
            session_id, replica, clients = change["s"], change["r"], change["n"]
        except (ValueError, KeyError, TypeError):
            log.warning("an attachment signal that says nothing: %r", payload[:200])
            return
        if replica == self._me:
            return
        if clients:
            self.routes.setdefault(session_id, Route()).targets.add(replica)
            self._said[(session_id, replica)] = asyncio.get_running_loop().time()
            return
        self._said.pop((session_id, replica), None)
        route = self.routes.get(session_id)
        if route is not None:
            route.targets.discard(replica)
            if not route.targets:
                self._spawn(self._channels.nobody_elsewhere(session_id))
            if route.idle():
                del self.routes[session_id]

    def _resync_map(self) -> None:
        self._spawn(self._reload_map())

    async def _reload_map(self) -> None:
        watchers = await self._registry.watchers(self._now())
        # A follow said while the map was being read may be missing from what was read.
        recent = asyncio.get_running_loop().time() - 2 * self._terms.renew_seconds
        for (session_id, replica), said_at in list(self._said.items()):
            if said_at < recent:
                del self._said[(session_id, replica)]
            else:
                watchers.setdefault(session_id, set()).add(replica)
        for session_id, route in list(self.routes.items()):
            route.targets = watchers.pop(session_id, set()) - {self._me}
            if route.idle():
                del self.routes[session_id]
        for session_id, replicas in watchers.items():
            others = replicas - {self._me}
            if others:
                self.routes[session_id] = Route(targets=others)

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self._terms.renew_seconds)
            try:
                if not await self._registry.renew(self._me, self._now(), self._terms.lease_seconds):
                    self._unsaid.update(self.routes)  # swept while slow: attached again
                await self._say_followed_again()
                swept = await self._registry.sweep(self._now())
                await self._reload_map()
                self._drop_unattended()
                self._dead_turns.update(swept.interrupted)
                for session_id, holder in list(self._dead_turns.items()):
                    if await self._interrupted(session_id, holder):
                        del self._dead_turns[session_id]
            except Exception as exc:  # the database is away: the next beat tries again
                log.warning("replica %s: heartbeat failed: %s", self._me, exc)

    def _drop_unattended(self) -> None:
        """Sessions followed for a client whose attach then failed: no longer followed."""
        for session_id, route in list(self.routes.items()):
            attended = self._channels.attached_here(session_id) or session_id in self._watching
            if route.inbound is not None and not attended:
                self._spawn(self._unfollow(session_id))

    async def _interrupted(self, session_id: str, holder: str) -> bool:
        """Tell every client of the session (through the journal: numbered once, here)
        that its turn ended with the replica running it, once its lease has lapsed (a
        replica swept while it was only slow still renews its turns' leases). The lapsed
        lease is taken first and given up after: no new turn begins before the notice is
        numbered. True: done with (told, or another holder took the lease meanwhile)."""
        sid, lease = SessionId(session_id), self._terms.lease_seconds
        if await self._registry.is_live(holder, self._now()):
            return True  # it was only slow, and beats again: its turn is its own
        live = await self._leases.live_holder(sid, self._now())
        if live == holder:
            return False  # not lapsed yet: the next beat looks again
        # Not our own id: a turn of ours that took the lapsed lease must not be taken.
        sweeper = f"{self._me}/sweeper"
        moment = self._now()
        until = moment + timedelta(seconds=lease)
        if live is not None or not await self._leases.acquire(sid, sweeper, moment, until):
            return True  # a new turn took it over: that is what its clients see now
        try:
            await self._tell_interrupted(session_id, holder)
        finally:
            await self._leases.release(sid, sweeper)
        return True

    async def _say_followed_again(self) -> None:
        for session_id in list(self._unsaid):
            route = self.routes.get(session_id)
            if route is not None and route.inbound is not None:
                await self._say_attached(session_id, 1)
            self._unsaid.discard(session_id)

    async def _tell_interrupted(self, session_id: str, holder: str) -> None:
        log.warning("session %s: its turn ended with replica %s", session_id, holder)
        self._journal.follow_on(session_id, await self._store.newest(session_id))
        text = "The server running this turn stopped; the session is idle again."
        notice = SessionNotice(
            severity=NoticeSeverity.WARNING,
            title="Turn interrupted",
            description=text,
            meta={"reason": "replica_gone", "turn": {"state": TurnPhase.IDLE.value}},
            fallback=Notice(
                message_id=MessageId(f"interrupted-{uuid.uuid4().hex}"), text=f"\n\n[{text}]"
            ),
        )
        await self._channels.emit(SessionId(session_id), notice)

    # -- sending ---------------------------------------------------------------------------

    def forward(self, route: Route, session_id: str, params: dict[str, Any]) -> None:
        """A numbered update of a session others follow (the streaming path: no await)."""
        seq = seq_of(params)
        if seq is None:
            return
        if route.inbound is not None and seq > route.inbound.last and not route.inbound.queue:
            route.inbound.last = seq  # numbered here: not to be filled from the journal
        if not route.targets:
            return
        if len(self._outbox) >= self._terms.max_queued:
            del self._outbox[: len(self._outbox) // 2]  # the followers fill these in
        for target in route.targets:
            self._outbox.append((target, session_id, seq, params))
        self._wake.set()

    async def _send_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._outbox = self._outbox, []
            by_target: dict[str, list[_Entry]] = {}
            alone = bool(self._owed)
            for target, owed in self._owed.items():  # numbers alone: read from the journal
                by_target[target] = [(sid, seq, _json([sid, seq])) for sid, seq in owed.items()]
            for target, session_id, seq, params in batch:
                entry = _json([session_id, seq, params])
                if len(entry) > MAX_PAYLOAD - 100:
                    entry, alone = _json([session_id, seq]), True
                by_target.setdefault(target, []).append((session_id, seq, entry))
            if alone:
                try:
                    await self._journal.flush()  # the follower reads those from there
                except Exception as exc:
                    log.warning("journal not flushed before a signal: %s", exc)
            self._owed = {}
            for target, entries in by_target.items():
                await self._publish(target, entries)

    async def _publish(self, target: str, entries: list["_Entry"]) -> None:
        for chunk in _chunks(self._me, entries):
            try:
                await self._signals.publish(updates_channel(target), chunk.payload)
            except Exception as exc:
                # Owed: once signals go through again, the newest number of each session
                # is sent alone and the follower reads the rest from the journal.
                log.warning("updates to replica %s not signalled yet: %s", target, exc)
                owed = self._owed.setdefault(target, {})
                for session_id, seq in chunk.newest.items():
                    owed[session_id] = max(owed.get(session_id, 0), seq)
        if self._owed.get(target) and not self._retrying:
            self._retrying = True
            asyncio.get_running_loop().call_later(0.5, self._retry)

    def _retry(self) -> None:
        self._retrying = False
        self._wake.set()

    # -- receiving -------------------------------------------------------------------------

    def _on_updates(self, payload: str) -> None:
        try:
            entries = json.loads(payload)["u"]
        except (ValueError, KeyError, TypeError):
            log.warning("an update signal that says nothing: %r", payload[:200])
            return
        for entry in entries:
            route = self.routes.get(entry[0])
            if route is None or route.inbound is None:
                continue  # no client here follows it (any more)
            params = entry[2] if len(entry) > 2 else None
            self._offer(entry[0], route.inbound, entry[1], params)

    def _offer(
        self, session_id: str, inbound: Inbound, seq: int, params: dict[str, Any] | None
    ) -> None:
        inbound.queue.append((seq, params))
        if inbound.worker is None or inbound.worker.done():
            inbound.worker = self._spawn(self._deliver_in_order(session_id, inbound))

    def _resync_updates(self) -> None:
        """Signals may have been lost: read the journal now, and again once the senders
        have flushed what they held."""
        for session_id, route in list(self.routes.items()):
            if route.inbound is not None:
                self._spawn(self._catch_up(session_id, route.inbound))

    async def _catch_up(self, session_id: str, inbound: Inbound) -> None:
        for pause in (0.0, 1.0, 3.0):
            await asyncio.sleep(pause)
            try:
                newest = await self._store.newest(session_id)
            except Exception as exc:
                log.warning("session %s: journal not readable yet: %s", session_id, exc)
                continue
            if newest > inbound.last:
                self._offer(session_id, inbound, newest, None)

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
        route = self.routes.get(session_id)
        if route is None or route.inbound is not inbound:
            return  # no longer followed
        try:
            newest = await self._store.newest(session_id)
        except Exception as exc:  # the next update, or a resync, shows the gap
            log.warning("session %s: journal not readable: %s", session_id, exc)
            return
        if newest > inbound.last:
            self._offer(session_id, inbound, newest, None)

    async def _deliver_queued(self, session_id: str, inbound: Inbound) -> None:
        while inbound.queue:
            seq, params = inbound.queue.popleft()
            if seq <= inbound.last:
                continue  # delivered already (or numbered here)
            if seq > inbound.last + 1 or params is None:
                await self._fill(session_id, inbound, seq if params is None else seq - 1)
            if params is not None and seq == inbound.last + 1:
                await self._deliver(session_id, inbound, seq, params)

    async def _fill(self, session_id: str, inbound: Inbound, through: int) -> None:
        """Deliver the journal's updates after `inbound.last` through `through`, waiting
        for them to be written; what never is within the patience is given up (its
        sender died before writing it)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self._terms.fill_patience
        pause = 0.02
        while inbound.last < through:
            try:
                window = await self._store.window(session_id, inbound.last, through - inbound.last)
            except Exception as exc:
                log.warning("session %s: journal not readable: %s", session_id, exc)
                window = None
            for update in window.updates if window is not None else ():
                if update.seq == inbound.last + 1:
                    await self._deliver(session_id, inbound, update.seq, json.loads(update.params))
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

    async def _deliver(
        self, session_id: str, inbound: Inbound, seq: int, params: dict[str, Any]
    ) -> None:
        inbound.last = seq
        self._journal.follow_on(session_id, seq)  # a turn here numbers after it
        try:
            await self._channels.deliver_relayed(session_id, params)
        except Exception:
            log.exception("session %s: a relayed update was not delivered", session_id)

    def _spawn(self, work: Any) -> "asyncio.Task[Any]":
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


_Entry = tuple[str, int, bytes]  # a session, a number, the entry as sent


@dataclass(slots=True)
class _Chunk:
    payload: str
    newest: dict[str, int]  # each session's newest number in it


def _chunks(sender: str, entries: list[_Entry]) -> list[_Chunk]:
    """The entries in as few notifications as they fit in, in order."""
    head = b'{"r":' + _json(sender) + b',"u":['
    chunks: list[_Chunk] = []
    part: list[bytes] = []
    newest: dict[str, int] = {}
    size = len(head) + 2
    for session_id, seq, entry in entries:
        if part and size + len(entry) + 1 > MAX_PAYLOAD:
            chunks.append(_Chunk((head + b",".join(part) + b"]}").decode(), newest))
            part, newest, size = [], {}, len(head) + 2
        part.append(entry)
        newest[session_id] = max(newest.get(session_id, 0), seq)
        size += len(entry) + 1
    if part:
        chunks.append(_Chunk((head + b",".join(part) + b"]}").decode(), newest))
    return chunks


def _json(value: object) -> bytes:
    """The wire's encoder (orjson, strict), without its line end."""
    return encode(cast(dict[str, Any], value))[:-1]
