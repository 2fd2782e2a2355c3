"""The methods that open a session for a client and attach it to it (the room decides what
attaching means): `session/new` and `session/fork` make a session and attach their sender
live; `session/load` and `session/resume` attach it to a stored or open session, idle or
mid-turn, once what it is sent first is sent (the history, or what it missed after its
cursor); a connection restored after a restart is attached with nothing to replay.

When the session's announce (its commands, its context usage) goes out depends on whether
the client can route it: for load and resume it names the id the client asked for, so it
comes before the response, and the response means "you have it all" (acp-tck ACP-LOAD-002);
for new and fork the id is only learnt from the response, so it follows it."""

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import schema as acp

from adapters.protocol import wire
from adapters.protocol.channels import Attaching, SessionChannels
from adapters.protocol.connection import AnswerThen, Connection
from adapters.protocol.dropped_queues import DroppedQueues, HeldElsewhere
from adapters.protocol.errors import running_elsewhere
from adapters.protocol.journal import UpdateJournal, cursor_of, missed_after
from adapters.protocol.opening import session_opening
from adapters.protocol.params import check_cwd, fork_point, no_mcp_default, parse_params
from adapters.protocol.use_cases import UseCases
from application.attachments.ownership import Role
from application.attachments.room import Attachments
from application.dto import SessionOpening
from application.use_cases.load_session import LoadSessionRequest
from application.use_cases.new_session import NewSessionRequest
from domain.events import AgentEvent
from domain.ids import SessionId

log = logging.getLogger(__name__)

# A session made for new/fork: its id and its result.
Made = tuple[str, dict[str, Any]]
# A session read for load/resume: its result, and the updates that show its history.
Read = tuple[dict[str, Any], Sequence[AgentEvent]]


class Openers:
    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments,
        channels: SessionChannels,
        journal: UpdateJournal | None,
        held_elsewhere: HeldElsewhere | None = None,
    ) -> None:
        self._uc = use_cases
        self._room = room
        self._channels = channels
        self._journal = journal
        # A queue lost with a process that died is told to the clients that come back.
        self._dropped = (
            None if journal is None else DroppedQueues(use_cases, journal, held_elsewhere)
        )

    async def new(self, params: dict[str, Any] | None, peer: Connection) -> AnswerThen:
        async def make(request: acp.NewSessionRequest, opening: SessionOpening) -> Made:
            state = await self._uc.new_session().execute(
                NewSessionRequest(cwd=request.cwd, opening=opening)
            )
            return state.session_id, wire.new_session_result(state)

        return await self._make(params, peer, acp.NewSessionRequest, "session/new", make)

    async def fork(self, params: dict[str, Any] | None, peer: Connection) -> AnswerThen:
        async def make(request: acp.ForkSessionRequest, opening: SessionOpening) -> Made:
            if self._room.running_elsewhere(request.session_id, peer):
                raise running_elsewhere(request.session_id)
            fork = self._uc.fork_session()
            at = fork_point(request.field_meta)
            state = await fork.execute(request.session_id, request.cwd, opening, at_message_id=at)
            return state.session_id, wire.fork_session_result(state)

        return await self._make(params, peer, acp.ForkSessionRequest, "session/fork", make)

    async def load(self, params: dict[str, Any] | None, peer: Connection) -> dict[str, Any]:
        """The stored history and the announce to `peer` alone, then live, then the
        response."""

        async def read(request: acp.LoadSessionRequest, opening: SessionOpening) -> Read:
            loaded = await self._uc.load_session().prepare(
                LoadSessionRequest(session_id=request.session_id, cwd=request.cwd, opening=opening)
            )
            return wire.load_session_result(loaded.state), loaded.replay

        return await self._attach(params, peer, acp.LoadSessionRequest, "session/load", read)

    async def resume(self, params: dict[str, Any] | None, peer: Connection) -> dict[str, Any]:
        """No replay: the announce, then live, then the response."""

        async def read(request: acp.ResumeSessionRequest, opening: SessionOpening) -> Read:
            resume = self._uc.resume_session()
            state = await resume.execute(request.session_id, request.cwd, opening)
            return wire.resume_session_result(state), ()

        return await self._attach(params, peer, acp.ResumeSessionRequest, "session/resume", read)

    async def restore(
        self, peer: Connection, session_id: str, cwd: str | None, *, tell_state: bool
    ) -> Role:
        """A connection restored after a restart (its missed updates come from the update
        log). With `cwd`, the session is first opened from storage if this process does not
        have it open (raises SessionNotFound). The peer gets the turn state first (unless the
        caller tells it), and its copy of a pending permission request."""
        async with self._room.arriving(session_id):
            elsewhere = await self._channels.follow(session_id)
            if cwd is not None:
                await self._uc.resume_session().execute(session_id, cwd)
        attaching = self._channels.begin_attach(
            session_id, peer, tell_state=tell_state, elsewhere=elsewhere
        )
        await attaching.go_live()
        await self._room.unless_gone(session_id, peer)
        await self._queue_lost(session_id)
        return self._room.role(session_id, peer)

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None:
        """A session `session/new` made and stored before the agent loaded
        (adapters/protocol/early_new.py): opened from storage and attached to `peer` live,
        as `new` leaves the session it makes; `announce` follows once the answer is out."""
        await self._uc.resume_session().execute(session_id, cwd)
        self._room.attach(session_id, peer)
        await self._room.unless_gone(session_id, peer)

    async def announce(self, session_id: str) -> None:
        """What follows a new session's answer: its commands and context usage."""
        await self._uc.announce().execute(session_id)

    async def _queue_lost(self, session_id: str) -> None:
        if self._dropped is not None:
            await self._dropped.check(session_id)

    async def _make(
        self,
        params: dict[str, Any] | None,
        peer: Connection,
        model: Any,
        method: str,
        make: Callable[[Any, SessionOpening], Awaitable[Made]],
    ) -> AnswerThen:
        """The result with the sender's role; then the commands and context usage (after
        it: the client learns the new session's id from the response)."""
        request = parse_params(model, no_mcp_default(params), method)
        check_cwd(request.cwd)
        session_id, result = await make(request, session_opening(params))
        role = self._room.attach(session_id, peer)
        await self._room.unless_gone(session_id, peer)
        return AnswerThen(_with_role(result, role), lambda: self.announce(session_id))

    async def _attach(
        self,
        params: dict[str, Any] | None,
        peer: Connection,
        model: Any,
        method: str,
        read: Callable[[Any, SessionOpening], Awaitable[Read]],
    ) -> dict[str, Any]:
        """Attach `peer`: what it is sent first (replay or missed updates, and the
        announce) to it alone, then the live updates held back meanwhile, all before the
        response it is given."""
        request = parse_params(model, no_mcp_default(params), method)
        check_cwd(request.cwd)
        opening = session_opening(params)
        session_id: str = request.session_id
        async with self._room.arriving(session_id):
            after = cursor_of(params)  # `_meta.iac_code.after`
            if after is not None:  # one the journal cannot serve is refused before attaching
                await missed_after(self._journal, session_id, after)
            # Followed from the journal's head before the replay is read: what another
            # replica numbers meanwhile waits in the client's buffer (no gap).
            elsewhere = await self._channels.follow(session_id)
            result, replay = await read(request, opening)
        # No await since the session was read: what is emitted from now on is not in it.
        attaching = self._channels.begin_attach(session_id, peer, elsewhere=elsewhere)
        try:
            if after is not None:  # what it missed instead of the whole history
                await attaching.send_missed(await missed_after(self._journal, session_id, after))
            else:
                for event in replay:
                    await attaching.emit(SessionId(session_id), event)
            await self._announce(session_id, attaching)
        except BaseException:
            await attaching.abort()
            raise
        # Live from here, still before the response: what the client is sent after it is
        # only what happens in the session from now on.
        await attaching.go_live()
        await self._room.unless_gone(session_id, peer)
        await self._queue_lost(session_id)  # a queue a dead process held: told, still before
        return _with_role(result, self._room.role(session_id, peer))

    async def _announce(self, session_id: str, attaching: Attaching) -> None:
        """The commands and context usage, to this client only. Best effort, as it was
        when it followed the response: a failure here does not refuse the attach."""
        try:
            await self._uc.announce().execute(session_id, sink=attaching)
        except Exception:
            log.exception("failed to announce session %s to an attaching client", session_id)


def _with_role(result: dict[str, Any], role: Role) -> dict[str, Any]:
    """Tell the client its role in the session: `_meta.iac_code.role`."""
    meta = dict(result.get("_meta") or {})
    meta["iac_code"] = {**(meta.get("iac_code") or {}), "role": role.value}
    return {**result, "_meta": meta}
