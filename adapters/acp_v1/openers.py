"""The methods that open a session for a client: `session/new` and `session/fork` make a
session and attach their sender live; `session/load` and `session/resume` attach it to a
stored or open session, idle or mid-turn, once what it is sent first is sent (the history,
or what it missed after its cursor). Here: v1's params read and answers rendered, each
answer telling the client its role (`_meta.iac_code.role`); what opening means, whatever
the version, is adapters.protocol.opening_flow's."""

from collections.abc import Sequence
from typing import Any

from acp import schema as acp

from adapters.acp_v1 import results
from adapters.acp_v1.opening import session_opening
from adapters.acp_v1.params import check_cwd, fork_point, isolation
from adapters.protocol.connection import AnswerThen, Connection
from adapters.protocol.dispatch import Call
from adapters.protocol.errors import running_elsewhere
from adapters.protocol.opening_flow import OpeningFlow
from adapters.protocol.use_cases import UseCases
from application.attachments.ownership import Role
from application.attachments.room import Attachments
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from domain.events import AgentEvent

# A session read for load/resume: its answer, and the updates that show its history.
Read = tuple[dict[str, Any], Sequence[AgentEvent]]


class Openers:
    def __init__(
        self, flow: OpeningFlow, use_cases: UseCases, room: Attachments[Connection]
    ) -> None:
        self._flow = flow
        self._uc = use_cases
        self._room = room

    async def new(self, request: acp.NewSessionRequest, call: Call) -> AnswerThen:
        """The result with the sender's role; then the commands and context usage (after
        it: the client learns the new session's id from the response)."""
        check_cwd(request.cwd)
        opening = session_opening(call.params)
        asked = isolation(request.field_meta)
        state = await self._uc.new_session().execute(
            NewSessionRequest(cwd=request.cwd, opening=opening, isolation=asked)
        )
        return await self._made(call, state.session_id, results.new_session_result(state))

    async def fork(self, request: acp.ForkSessionRequest, call: Call) -> AnswerThen:
        check_cwd(request.cwd)
        opening = session_opening(call.params)
        if self._room.running_elsewhere(request.session_id, call.peer):
            raise running_elsewhere(request.session_id)
        at = fork_point(request.field_meta)
        fork = self._uc.fork_session()
        state = await fork.execute(request.session_id, request.cwd, opening, at_message_id=at)
        return await self._made(call, state.session_id, results.fork_session_result(state))

    async def load(self, request: acp.LoadSessionRequest, call: Call) -> dict[str, Any]:
        """The stored history and the announce to the sender alone, then live, then the
        response."""
        check_cwd(request.cwd)
        opening = session_opening(call.params)

        async def reading() -> Read:
            loaded = await self._uc.load_session().prepare(
                LoadSessionRequest(session_id=request.session_id, cwd=request.cwd, opening=opening)
            )
            return results.load_session_result(loaded.state), loaded.replay

        result, role = await self._flow.read(call.peer, request.session_id, call.params, reading)
        return with_role(result, role)

    async def resume(self, request: acp.ResumeSessionRequest, call: Call) -> dict[str, Any]:
        """No replay: the announce, then live, then the response."""
        check_cwd(request.cwd)
        opening = session_opening(call.params)

        async def reading() -> Read:
            resume = self._uc.resume_session()
            state = await resume.execute(request.session_id, request.cwd, opening)
            return results.resume_session_result(state), ()

        result, role = await self._flow.read(call.peer, request.session_id, call.params, reading)
        return with_role(result, role)

    async def _made(self, call: Call, session_id: str, result: dict[str, Any]) -> AnswerThen:
        role = await self._flow.made(call.peer, session_id)
        return AnswerThen(with_role(result, role), lambda: self._flow.announce(session_id))


def with_role(result: dict[str, Any], role: Role) -> dict[str, Any]:
    """Tell the client its role in the session: `_meta.iac_code.role`."""
    meta = dict(result.get("_meta") or {})
    meta["iac_code"] = {**(meta.get("iac_code") or {}), "role": role.value}
    return {**result, "_meta": meta}
