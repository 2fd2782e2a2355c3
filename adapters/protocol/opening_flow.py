"""What opening a session for a client means, whatever the protocol version (its face
parses the request and renders the answer around this):

- made (new, fork): the sender is attached live; the session's announce (its commands,
  its context usage) follows the answer, which is where the client learns the id from;
- read (load, resume): followed on the other replicas first, then read; the history (or
  what the client missed after its cursor, `_meta.iac_code.after`) and the announce go to
  it alone, then the live updates held back meanwhile, all before the answer (which means
  "you have it all": acp-tck ACP-LOAD-002);
- restored (a connection taken up after a restart): attached with nothing to replay;
- taken over (a session made before the agent loaded): opened from storage and attached.

The room decides what attaching means. After a read or a restore, `after_attach` (the
face's) may tell the clients about the session, e.g. a queue a dead process held."""

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from adapters.protocol.channels import Attaching, SessionChannels
from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal, cursor_of, missed_after
from adapters.protocol.replicas import Replicas
from adapters.protocol.use_cases import UseCases
from application.attachments.ownership import Role
from application.attachments.room import Attachments
from domain.events import AgentEvent
from domain.ids import SessionId

log = logging.getLogger(__name__)

R = TypeVar("R")
# The session read for a client: the face's answer, and the updates that show its history.
Reading = Callable[[], Awaitable[tuple[R, Sequence[AgentEvent]]]]
AfterAttach = Callable[[str], Awaitable[None]]


class OpeningFlow:
    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments[Connection],
        channels: SessionChannels,
        journal: UpdateJournal | None,
        replicas: Replicas,
        after_attach: AfterAttach | None = None,
    ) -> None:
        self._uc = use_cases
        self._room = room
        self._channels = channels
        self._journal = journal
        self._replicas = replicas
        self._after_attach = after_attach

    async def made(self, peer: Connection, session_id: str) -> Role:
        """A session made for `peer` (new, fork): attached live; its role."""
        role = self._room.attach(session_id, peer)
        await self._room.unless_gone(session_id, peer)
        return role

    async def read(
        self, peer: Connection, session_id: str, params: dict[str, Any] | None, reading: Reading[R]
    ) -> tuple[R, Role]:
        """Attach `peer` to the session `reading` reads: what it is sent first (replay or
        missed updates, and the announce) to it alone, then the live updates held back
        meanwhile; the reading's answer and `peer`'s role, once it has them all."""
        async with self._room.arriving(session_id):
            after = cursor_of(params)  # `_meta.iac_code.after`
            if after is not None:  # one the journal cannot serve is refused before attaching
                await missed_after(self._journal, session_id, after)
            # Followed from the journal's head before the replay is read: what another
            # replica numbers meanwhile waits in the client's buffer (no gap).
            elsewhere = await self._replicas.follow(session_id)
            result, replay = await reading()
        # No await since the session was read: what is emitted from now on is not in it.
        attaching = self._channels.begin_attach(session_id, peer, elsewhere=elsewhere)
        try:
            if after is not None:  # what it missed instead of the whole history
                await attaching.send_missed(await missed_after(self._journal, session_id, after))
            else:
                for event in replay:
                    await attaching.emit(SessionId(session_id), event)
            await self._announce_to(session_id, attaching)
        except BaseException:
            await attaching.abort()
            raise
        # Live from here, still before the response: what the client is sent after it is
        # only what happens in the session from now on.
        await attaching.go_live()
        await self._room.unless_gone(session_id, peer)
        await self._attached(session_id)  # e.g. a queue a dead process held: told before too
        return result, self._room.role(session_id, peer)

    async def restore(
        self, peer: Connection, session_id: str, cwd: str | None, *, tell_state: bool
    ) -> Role:
        """A connection restored after a restart (its missed updates come from the update
        log). With `cwd`, the session is first opened from storage if this process does not
        have it open (raises SessionNotFound). The peer gets the turn state first (unless the
        caller tells it), and its copy of a pending permission request."""
        async with self._room.arriving(session_id):
            elsewhere = await self._replicas.follow(session_id)
            if cwd is not None:
                await self._uc.resume_session().execute(session_id, cwd)
        attaching = self._channels.begin_attach(
            session_id, peer, tell_state=tell_state, elsewhere=elsewhere
        )
        await attaching.go_live()
        await self._room.unless_gone(session_id, peer)
        await self._attached(session_id)
        return self._room.role(session_id, peer)

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None:
        """A session made and stored before the agent loaded (by the face's early
        `session/new`): opened from storage and attached to `peer` live, as `made` leaves
        the session it is given; `announce` follows once the answer is out."""
        await self._uc.resume_session().execute(session_id, cwd)
        self._room.attach(session_id, peer)
        await self._room.unless_gone(session_id, peer)

    async def announce(self, session_id: str) -> None:
        """What follows a new session's answer: its commands and context usage."""
        await self._uc.announce().execute(session_id)

    async def _attached(self, session_id: str) -> None:
        if self._after_attach is not None:
            await self._after_attach(session_id)

    async def _announce_to(self, session_id: str, attaching: Attaching) -> None:
        """The commands and context usage, to this client only. Best effort, as it was
        when it followed the response: a failure here does not refuse the attach."""
        try:
            await self._uc.announce().execute(session_id, sink=attaching)
        except Exception:
            log.exception("failed to announce session %s to an attaching client", session_id)
