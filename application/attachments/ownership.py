"""Which connection may act on which session: the rules, and nothing else.

A session has an ordered set of attached connections (peers). The first attached, or the
last one whose prompt was accepted, is the *controller*; the others *observe*. The rules:

- attach: `session/new`, `session/fork`, `session/load` and `session/resume` attach their
  sender, at any time (idle or while a turn runs). Attaching twice changes nothing.
- act: an attached peer may prompt, cancel, set the mode or a config option, rename,
  close (detaches it) and delete. A session nobody has attached is free for anyone (a
  stored session reached by id, as before). A peer that is not attached while others are
  gets "not open on this connection": it must load or resume first.
- prompt: accepted from an attached peer makes it the controller (its capabilities, such as
  the editor's files and terminals, serve the session from then on); a prompt while a turn
  runs is answered busy by the turn itself, whoever sends it. A prompt accepted on a session
  nobody has attached attaches its sender (the room, application.attachments.room).
- cancel: any attached peer (or anyone, while nobody is attached).
- detach (`session/close`, the connection going away): the peer leaves; when it was the
  controller, the longest attached remaining peer takes over. `last_out` says whether nobody
  is left (the caller then closes the session, or waits for someone to come back).

Peers are any hashable objects, so these rules are tested without connections.
"""

from collections.abc import Hashable
from enum import StrEnum
from typing import Generic, TypeVar

P = TypeVar("P", bound=Hashable)


class Role(StrEnum):
    CONTROLLER = "controller"
    OBSERVER = "observer"


class NotAttached(Exception):
    """The peer may not act on a session other peers hold: it must attach first."""


class Ownership(Generic[P]):
    def __init__(self) -> None:
        self._peers: dict[str, list[P]] = {}  # in attach order
        self._controller: dict[str, P] = {}

    def attach(self, session_id: str, peer: P) -> Role:
        peers = self._peers.setdefault(session_id, [])
        if peer not in peers:
            peers.append(peer)
        controller = self._controller.setdefault(session_id, peer)
        return Role.CONTROLLER if controller == peer else Role.OBSERVER

    def detach(self, session_id: str, peer: P) -> bool:
        """Remove `peer`; True when it was the last one attached (and was attached)."""
        peers = self._peers.get(session_id)
        if peers is None or peer not in peers:
            return False
        peers.remove(peer)
        if not peers:
            del self._peers[session_id]
            self._controller.pop(session_id, None)
            return True
        if self._controller.get(session_id) == peer:
            self._controller[session_id] = peers[0]
        return False

    def forget(self, session_id: str) -> list[P]:
        """Drop the session (deleted): the peers it had."""
        self._controller.pop(session_id, None)
        return self._peers.pop(session_id, [])

    def peers_of(self, session_id: str) -> list[P]:
        return list(self._peers.get(session_id, ()))

    def followed(self) -> list[str]:
        """The sessions with at least one peer attached."""
        return list(self._peers)

    def sessions_of(self, peer: P) -> list[str]:
        return [sid for sid, peers in self._peers.items() if peer in peers]

    def controller_of(self, session_id: str) -> P | None:
        return self._controller.get(session_id)

    def role_of(self, session_id: str, peer: P) -> Role | None:
        if peer not in self._peers.get(session_id, ()):
            return None
        return Role.CONTROLLER if self._controller.get(session_id) == peer else Role.OBSERVER

    def is_attached(self, session_id: str, peer: P) -> bool:
        return peer in self._peers.get(session_id, ())

    def check_may_act(self, session_id: str, peer: P) -> None:
        """Prompt, cancel, set mode/config, rename, close, delete: an attached peer, or
        anyone while nobody is attached. Raises NotAttached otherwise."""
        peers = self._peers.get(session_id)
        if peers and peer not in peers:
            raise NotAttached(session_id)

    def may_cancel(self, session_id: str, peer: P) -> bool:
        try:
            self.check_may_act(session_id, peer)
        except NotAttached:
            return False
        return True

    def take_control(self, session_id: str, peer: P) -> P | None:
        """`peer` (attached, or attached now) becomes the controller; the previous one is
        returned so that a refused prompt can give control back."""
        previous = self._controller.get(session_id)
        self.attach(session_id, peer)
        self._controller[session_id] = peer
        return previous

    def give_back(self, session_id: str, peer: P, previous: P | None) -> None:
        """Undo `take_control` (the prompt was refused), if nothing changed since."""
        if self._controller.get(session_id) != peer:
            return
        if previous is not None and previous in self._peers.get(session_id, ()):
            self._controller[session_id] = previous
