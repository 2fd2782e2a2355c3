"""Each session's updates, fanned out to every connection attached to it.

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
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.protocol.connection import Connection
from adapters.protocol.journal import seq_of, with_meta
from adapters.protocol.ownership import Ownership, Role
from adapters.protocol.wire import notification_for
from application.ports.event_sink import EventSink
from domain.events import AgentEvent
from domain.ids import SessionId

# Called once a peer is live on a session (after its replay and buffer): e.g. to send it
# its copy of a pending permission request.
OnLive = Callable[[str, Connection], Awaitable[None]]
# Called when a peer leaves a session (close, disconnect, delete): e.g. to withdraw its
# copy of a pending permission request, which it may no longer answer.
OnLeft = Callable[[str, Connection], None]


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


class SessionChannels(EventSink):
    def __init__(
        self,
        *,
        update_log: UpdateLog | None = None,
        busy: Callable[[str], bool] = lambda _: False,
    ) -> None:
        self.ownership: Ownership[Connection] = Ownership()
        self._log = update_log
        self._busy = busy
        self._feeds: dict[tuple[str, Connection], _Feed] = {}
        self._awaiting: dict[str, str] = {}  # session -> tool call id of its pending permission
        self._on_live: list[OnLive] = []
        self._on_left: list[OnLeft] = []

    # -- attaching and detaching ---------------------------------------------------------

    def attach(self, session_id: str, peer: Connection) -> Role:
        """Attach `peer` live at once (a session it just created: nothing to replay)."""
        role = self.ownership.attach(session_id, peer)
        self._feeds.setdefault((session_id, peer), _Feed(peer))
        return role

    def begin_attach(self, session_id: str, peer: Connection) -> "Attaching":
        """Attach `peer`, holding its live updates back until `Attaching.go_live`."""
        was_attached = self.ownership.is_attached(session_id, peer)
        self.ownership.attach(session_id, peer)
        feed = self._feeds.setdefault((session_id, peer), _Feed(peer))
        if feed.buffer is None:
            feed.buffer = []
        feed.told_state = False  # what it is told next starts its view afresh
        return Attaching(self, session_id, feed, was_attached)

    def detach(self, session_id: str, peer: Connection) -> bool:
        """True when `peer` was the last attached."""
        self._feeds.pop((session_id, peer), None)
        was_attached = self.ownership.is_attached(session_id, peer)
        last = self.ownership.detach(session_id, peer)
        if was_attached:
            self._left(session_id, peer)
        return last

    def forget(self, session_id: str) -> None:
        for peer in self.ownership.forget(session_id):
            self._feeds.pop((session_id, peer), None)
            self._left(session_id, peer)

    def _left(self, session_id: str, peer: Connection) -> None:
        for listener in self._on_left:
            listener(session_id, peer)

    def peer_of(self, session_id: str) -> Connection | None:
        """The controller: whose capabilities (files, terminals) serve the session."""
        return self.ownership.controller_of(session_id)

    def live_peers(self, session_id: str) -> list[Connection]:
        """The attached peers already past their replay."""
        return [
            peer
            for peer in self.ownership.peers_of(session_id)
            if (feed := self._feeds.get((session_id, peer))) is not None and feed.buffer is None
        ]

    def sessions_of(self, peer: Connection) -> list[str]:
        return self.ownership.sessions_of(peer)

    def on_live(self, listener: OnLive) -> None:
        self._on_live.append(listener)

    def on_left(self, listener: OnLeft) -> None:
        self._on_left.append(listener)

    # -- turn state ----------------------------------------------------------------------

    def set_awaiting(self, session_id: str, tool_call_id: str | None) -> None:
        if tool_call_id is None:
            self._awaiting.pop(session_id, None)
        else:
            self._awaiting[session_id] = tool_call_id

    def turn_state(self, session_id: str) -> dict[str, Any]:
        if (tool_call_id := self._awaiting.get(session_id)) is not None:
            return {"state": "awaiting_permission", "toolCallId": tool_call_id}
        return {"state": "running" if self._busy(session_id) else "idle"}

    # -- sending -------------------------------------------------------------------------

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        params = notification_for(session_id, event)
        if self._log is not None:
            params = await self._log.record(session_id, params)
        sends = []
        for peer in self.ownership.peers_of(session_id):
            feed = self._feeds.get((session_id, peer))
            if feed is None:
                continue
            if feed.buffer is not None:
                feed.buffer.append(params)
            else:
                sends.append(self.deliver(session_id, feed, params))
        if len(sends) == 1:
            await sends[0]
        elif sends:
            await asyncio.gather(*sends)

    async def deliver(self, session_id: str, feed: _Feed, params: dict[str, Any]) -> None:
        if not feed.told_state:
            feed.told_state = True
            params = with_meta(params, turn=self.turn_state(session_id))
        await feed.peer.send_notification("session/update", params)

    async def went_live(self, session_id: str, peer: Connection) -> None:
        for listener in self._on_live:
            await listener(session_id, peer)


@dataclass(slots=True)
class Attaching(EventSink):
    """A peer being attached: its replay (and announce) go to it alone, then `go_live`."""

    channels: SessionChannels
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
        await self.channels.deliver(session_id, self.feed, notification_for(session_id, event))

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
            update = {"sessionUpdate": "session_info_update"}
            info = {"sessionId": self.session_id, "update": update}
            await self.channels.deliver(self.session_id, feed, info)
        await self.channels.went_live(self.session_id, feed.peer)

    async def abort(self) -> None:
        """The attach failed: a peer that was not attached before leaves again; one that
        was gets what it missed meanwhile and stays."""
        if self._done:
            return
        if self.was_attached:
            await self.go_live()
        else:
            self._done = True
            self.channels.detach(self.session_id, self.feed.peer)
