"""The methods that act on a session without running a turn: its mode and config options
(applied by the replica running its turn, if another one runs it), close, list, delete,
rename, and rewind with its undo."""

from typing import Any

from acp import schema as acp

from adapters.acp_v1 import results
from adapters.acp_v1.child_sessions import listed_parent
from adapters.acp_v1.params import check_list_cwd, discard_worktree
from adapters.acp_v1.requests import (
    ConfigOptionParams,
    RenameParams,
    RewindParams,
    RewindUndoParams,
)
from adapters.acp_v1.rewind_wire import rewound_result, undone_result
from adapters.acp_v1.turns import routed_to_holder
from adapters.acp_v1.wire import dump
from adapters.protocol.connection import Connection
from adapters.protocol.dispatch import Call
from adapters.protocol.received import ReceivedPrompts
from adapters.protocol.replicas import NOT_ROUTED, Replicas
from adapters.protocol.use_cases import UseCases
from application.attachments.room import Attachments
from application.runtime.registry import CLOSE_GRACE
from application.sessions.settings import SetConfigOptionRequest, SetModeRequest


class SessionMethods:
    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments[Connection],
        replicas: Replicas,
        received: ReceivedPrompts,
    ) -> None:
        self._uc = use_cases
        self._room = room
        self._replicas = replicas
        self._received = received

    async def set_mode(self, request: acp.SetSessionModeRequest, call: Call) -> Any:
        self._room.check_may_act(request.session_id, call.peer)
        routed = await routed_to_holder(self._uc, self._replicas, call, request.session_id)
        return routed if routed is not NOT_ROUTED else await self.apply_set_mode(request)

    async def apply_set_mode(self, request: acp.SetSessionModeRequest) -> Any:
        await self._uc.set_mode().execute(
            SetModeRequest(session_id=request.session_id, mode_id=request.mode_id)
        )
        return dump(acp.SetSessionModeResponse())

    async def set_config_option(self, params: ConfigOptionParams, call: Call) -> Any:
        session_id = params.root.session_id
        self._room.check_may_act(session_id, call.peer)
        routed = await routed_to_holder(self._uc, self._replicas, call, session_id)
        return routed if routed is not NOT_ROUTED else await self.apply_config_option(params)

    async def apply_config_option(self, params: ConfigOptionParams) -> Any:
        request = params.root
        state = await self._uc.set_config_option().execute(
            SetConfigOptionRequest(
                session_id=request.session_id, option_id=request.config_id, value=request.value
            )
        )
        return results.set_config_result(state)

    async def close(self, request: acp.CloseSessionRequest, call: Call) -> Any:
        """Detach the sender; the session is closed (its turn cancelled) when the last
        attached client closes it, or by anyone while nobody is attached."""
        if self._room.close_by(request.session_id, call.peer):
            # Prompts received before the close answer `cancelled` first, however recent.
            async with self._received.closing(request.session_id, CLOSE_GRACE):
                await self._uc.close().execute(request.session_id)
        return dump(acp.CloseSessionResponse())

    async def list_sessions(self, request: acp.ListSessionsRequest, call: Call) -> Any:
        check_list_cwd(request.cwd)
        parent = listed_parent(request.field_meta)
        page = await self._uc.list_sessions().execute(request.cwd, request.cursor, parent)
        return results.list_result(page)

    async def delete(self, request: acp.DeleteSessionRequest, call: Call) -> Any:
        self._room.check_may_act(request.session_id, call.peer)
        discard = discard_worktree(request.field_meta)
        await self._uc.delete_session().execute(request.session_id, discard_worktree=discard)
        self._room.forget(request.session_id)
        return dump(acp.DeleteSessionResponse())

    async def rename(self, request: RenameParams, call: Call) -> Any:
        self._room.check_may_act(request.session_id, call.peer)
        return {"title": await self._uc.rename_session().execute(request.session_id, request.title)}

    async def rewind(self, request: RewindParams, call: Call) -> Any:
        session_id = request.session_id
        self._room.check_may_act(session_id, call.peer)
        rewound = await self._uc.rewind_session().execute(
            session_id, request.to_message_id, files=request.restore_files()
        )
        return rewound_result(rewound)

    async def rewind_undo(self, request: RewindUndoParams, call: Call) -> Any:
        self._room.check_may_act(request.session_id, call.peer)
        undone = await self._uc.rewind_session().undo_rewind(
            request.session_id, request.undo_token, files=request.resolve()
        )
        return undone_result(undone)
