"""Each session's updates, delivered to every client attached to it (who is attached is
the room's: application.attachments.room).

- A live update goes through the optional `UpdateLog` once (it numbers it), then to every
  attached peer, exactly once and in the order emitted. Peers are sent to concurrently:
  one whose transport is slow holds an update only as long as that transport's own
  patience (the HTTP outbox then fails the connection, which detaches it), and the others
  are written at the same moment rather than after it.
- A peer being attached by `session/load` or `session/resume` gets its replay privately
  (through `Attaching`, never through the log), while the live updates emitted meanwhile
  wait in its own buffer; `Attaching.go_live` sends that buffer, then the peer is live.
- The first update a newly attached peer receives carries the session's turn state in
  `_meta.iac_code.turn` (`idle`, `running`, or `awaiting_permission` with the tool call).
- Each update is rendered once for all of a session's peers, and shaped per peer as it is
  delivered (e.g. a notice to a peer that takes notices, its agent-text fallback, or
  nothing, to any other): both are the face's (`UpdateRendering`), handed in.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.protocol.connection import Connection
from adapters.protocol.journal import seq_of, with_meta
from adapters.protocol.rendering import UpdateRendering
from adapters.protocol.replicas import Replicas
from application.attachments.room import Attachments
from application.attachments.turn_state import TurnPhase, TurnState
from application.ports.event_sink import EventSink
from domain.events import AgentEvent, ChildEvent
from domain.ids import SessionId


class UpdateLog(Protocol):
    """Sees every live update once, before any peer does, and returns the params to send
    (e.g. with a per-session sequence number added in `_meta`)."""

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(slots=True)
class _Feed:
    """One peer's view of one session."""

    peer: Connection
    buffer: list[dict[str, Any]] | None = None  # not None: attaching, live updates wait here
    told_state: bool = False  # has it had the turn state (on its first update)?
    elsewhere: TurnState | None = None  # the turn another replica runs, as it attached


def turn_meta(state: TurnState) -> dict[str, Any]:
    """The turn state as `_meta.iac_code.turn` says it."""
    if state.phase is TurnPhase.AWAITING_PERMISSION:
        return {"state": state.phase.value, "toolCallId": state.tool_call_id}
    return {"state": state.phase.value}


class SessionChannels(EventSink):
    def __init__(
        self,
        room: Attachments[Connection],
        rendering: UpdateRendering,
        *,
        update_log: UpdateLog | None = None,
    ) -> None:
        self._room = room
        self._log = update_log
        self.rendering = rendering
        # Looked up once: each is called per update (and per peer) of a streaming turn.
        self._notification = rendering.notification
        self._for_client = rendering.for_client
        self._method = rendering.method
        self._feeds: dict[tuple[str, Connection], _Feed] = {}  # made at a peer's first update
        # Other replicas whose clients may follow this one's sessions: None unless they
        # share PostgreSQL (the cluster registers itself as it starts), so a single replica
        # pays nothing for them per update.
        self._replicas: Replicas | None = None
        room.on_left(self._left)

    def replicate_through(self, replicas: Replicas) -> None:
        """Numbered updates also go to `replicas`, for the clients attached there."""
        self._replicas = replicas

    def begin_attach(
        self,
        session_id: str,
        peer: Connection,
        *,
        tell_state: bool = True,
        elsewhere: TurnState | None = None,
    ) -> "Attaching":
        """Attach `peer`, holding its live updates back until `Attaching.go_live`. Without
        `tell_state` its first update carries no turn state (the caller tells it);
        `elsewhere`: the turn another replica runs, told unless one runs here."""
        was_attached = self._room.is_attached(session_id, peer)
        self._room.attach(session_id, peer, live=False)
        feed = self._feed(session_id, peer)
        if feed.buffer is None:
            feed.buffer = []
        feed.told_state = not tell_state  # what it is told next starts its view afresh
        feed.elsewhere = elsewhere
        return Attaching(self, self._room, session_id, feed, was_attached)

    def turn_state(self, session_id: str) -> dict[str, Any]:
        return turn_meta(self._room.turn_state(session_id))

    def _feed(self, session_id: str, peer: Connection) -> _Feed:
        # Called for every update of a streaming turn: no new _Feed unless it is missing.
        feed = self._feeds.get((session_id, peer))
        if feed is None:
            feed = self._feeds[(session_id, peer)] = _Feed(peer)
        return feed

    def _left(self, session_id: str, peer: Connection) -> None:
        self._feeds.pop((session_id, peer), None)

    # -- sending -------------------------------------------------------------------------

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        params = self._notification(session_id, event)
        # A child's own traffic is live only: the journal numbers each session's updates,
        # and these are addressed to another (the child's announcement and end are kept).
        if self._log is not None and not isinstance(event, ChildEvent):
            params = await self._log.record(session_id, params)
            if self._replicas is not None:
                self._replicas.forward(session_id, params)
        await self._fan_out(session_id, params)

    async def deliver_relayed(
        self, session_id: str, params: dict[str, Any], *, numbered_again: bool = False
    ) -> None:
        """An update another replica numbered, to the clients attached here; with
        `numbered_again`, under a number they may have been sent already (another update,
        which its replica died before writing)."""
        seq = seq_of(params) if numbered_again else None
        if seq is not None:
            for peer in self._room.peers_of(session_id):
                peer.numbered_again(session_id, seq)
        await self._fan_out(session_id, params)

    async def _fan_out(self, session_id: str, params: dict[str, Any]) -> None:
        sends = []
        for peer in self._room.peers_of(session_id):
            feed = self._feed(session_id, peer)
            if feed.buffer is not None:
                feed.buffer.append(params)
            else:
                sends.append(self.deliver(session_id, feed, params))
        if len(sends) == 1:
            await sends[0]
        elif sends:
            await asyncio.gather(*sends)

    async def deliver(self, session_id: str, feed: _Feed, params: dict[str, Any]) -> None:
        shaped = self._for_client(params, feed.peer.client_capabilities)
        if shaped is None:
            return  # nothing of it for this client (e.g. a notice without a fallback)
        params = shaped
        if not feed.told_state:
            feed.told_state = True
            state = self._room.turn_state(session_id)
            if state.phase is TurnPhase.IDLE and feed.elsewhere is not None:
                state = feed.elsewhere
            params = with_meta(params, turn=turn_meta(state))
        await feed.peer.send_notification(self._method, params)


@dataclass(slots=True)
class Attaching(EventSink):
    """A peer being attached: its replay (and announce) go to it alone, then `go_live`."""

    channels: SessionChannels
    room: Attachments[Connection]
    session_id: str
    feed: _Feed
    was_attached: bool
    _done: bool = field(default=False)
    _sent_through: int = field(default=0)  # the newest numbered update it was sent

    async def send_missed(self, updates: list[dict[str, Any]]) -> None:
        """Numbered updates it missed (from the update log), to it alone. Live updates held
        back meanwhile that these already include are skipped in `go_live`."""
        for params in updates:
            await self.channels.deliver(self.session_id, self.feed, params)
            self._sent_through = max(self._sent_through, seq_of(params) or 0)

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        params = self.channels.rendering.notification(session_id, event)
        await self.channels.deliver(session_id, self.feed, params)

    async def go_live(self) -> None:
        """Send what was emitted meanwhile, in order, then live. Idempotent."""
        if self._done:
            return
        self._done = True
        feed = self.feed
        buffer = feed.buffer or []
        while buffer:
            params = buffer.pop(0)
            if self._sent_through and 0 < (seq_of(params) or 0) <= self._sent_through:
                continue  # already sent among the missed ones
            await self.channels.deliver(self.session_id, feed, params)
        feed.buffer = None
        if not feed.told_state:  # nothing was sent: the state still reaches it
            info = self.channels.rendering.state_only(self.session_id)
            await self.channels.deliver(self.session_id, feed, info)
        await self.room.went_live(self.session_id, feed.peer)

    async def abort(self) -> None:
        """The attach failed: a peer that was not attached before leaves again; one that
        was gets what it missed meanwhile and stays."""
        if self._done:
            return
        if self.was_attached:
            await self.go_live()
        else:
            self._done = True
            self.room.detach(self.session_id, self.feed.peer)
