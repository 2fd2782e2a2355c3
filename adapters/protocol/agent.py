"""The ACP agent side: every protocol method, its params model, and the use case it calls."""

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from acp import schema as acp
from pydantic import BaseModel, ValidationError

from adapters.protocol import wire
from adapters.protocol.attachments import prompt_content
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import AnswerThen, Connection, Dispatcher
from adapters.protocol.errors import to_rpc_error
from adapters.protocol.handshake import API_KEY_METHOD, handle_initialize
from adapters.protocol.journal import CursorExpired, UpdateJournal, cursor_of, expired_error
from adapters.protocol.jsonrpc import AUTH_REQUIRED, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from adapters.protocol.opening import session_opening
from application.errors import ApplicationError
from application.use_cases.announce import AnnounceSession
from application.use_cases.initialize import Initialize
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.listing import ListSessions
from application.use_cases.load_session import LoadSession, LoadSessionRequest
from application.use_cases.new_session import NewSession, NewSessionRequest
from application.use_cases.prompt import Prompt, PromptRequest
from application.use_cases.session_settings import (
    SetConfigOption,
    SetConfigOptionRequest,
    SetMode,
    SetModeRequest,
)
from application.use_cases.sessions import (
    DeleteSession,
    ForkSession,
    RenameSession,
    ResumeSession,
)
from domain.errors import DomainError
from domain.images import DEFAULT_MAX_IMAGE_BYTES

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

# Our extension (ACP reserves "_"-prefixed names for them): give a session another title.
RENAME_METHOD = "_iac_code/session/rename"

# Shorthand method names used by the product documents, served as the official ones.
ALIASES = {"sessions/list": "session/list", "config/set": "session/set_config_option"}


@dataclass(frozen=True, slots=True, kw_only=True)
class UseCases:
    """Factories for each use case (the composition root decides how they are built)."""

    initialize: Initialize
    has_credentials: Callable[[], bool]
    new_session: Callable[[], NewSession]
    load_session: Callable[[], LoadSession]
    prompt: Callable[[], Prompt]
    cancel: Callable[[], CancelTurn]
    close: Callable[[], CloseSession]
    set_mode: Callable[[], SetMode]
    set_config_option: Callable[[], SetConfigOption]
    list_sessions: Callable[[], ListSessions]
    resume_session: Callable[[], ResumeSession]
    fork_session: Callable[[], ForkSession]
    delete_session: Callable[[], DeleteSession]
    busy: Callable[[str], bool]  # is a prompt running in this session?
    rename_session: Callable[[], RenameSession]
    announce: Callable[[], AnnounceSession]
    key_variable: str = "IAC_CODE_API_KEY"  # named when a key is missing


def parse_params(model: type[M], params: dict[str, Any] | None, method: str) -> M:
    try:
        return model.model_validate(params or {})
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]) or "params", "message": e["msg"]}
            for e in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:3])
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params for {method}: {summary}",
            {"method": method, "errors": errors},
        ) from None


def _no_mcp_default(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The product documents (and their curl walkthrough) treat mcpServers as optional;
    the schema requires it. A missing list means no servers."""
    if isinstance(params, dict) and "mcpServers" not in params:
        return {**params, "mcpServers": []}
    return params


def _check_cwd(cwd: str) -> None:
    if not os.path.isabs(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd must be an absolute path.",
            {"field": "cwd", "cwd": cwd, "reason": "not absolute"},
        )
    if not os.path.isdir(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd is not an existing directory.",
            {"field": "cwd", "cwd": cwd, "reason": "no such directory"},
        )


class AcpAgent(Dispatcher):
    def __init__(
        self,
        use_cases: UseCases,
        channels: SessionChannels,
        *,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        journal: UpdateJournal | None = None,
    ) -> None:
        self._uc = use_cases
        self._journal = journal
        self._channels = channels
        self._max_image_bytes = max_image_bytes
        self._requests: dict[str, Callable[[dict[str, Any] | None, Connection], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "logout": self._logout,
            "session/new": self._new_session,
            "session/load": self._load_session,
            "session/prompt": self._prompt,
            "session/set_mode": self._set_mode,
            "session/set_config_option": self._set_config_option,
            "session/close": self._close,
            "session/list": self._list,
            "session/resume": self._resume,
            "session/fork": self._fork,
            "session/delete": self._delete,
            RENAME_METHOD: self._rename,
        }

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        handler = self._requests.get(ALIASES.get(method, method))
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        try:
            return await handler(params, peer)
        except (ApplicationError, DomainError) as exc:
            raise to_rpc_error(exc) from exc

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        if method == "session/cancel":
            request = parse_params(acp.CancelNotification, params, method)
            if self._channels.peer_of(request.session_id) in (None, peer):
                try:
                    await self._uc.cancel().anywhere(request.session_id)
                except ApplicationError as exc:  # a notification has no answer to carry it
                    log.warning("session/cancel of %s failed: %s", request.session_id, exc)
        else:
            log.debug("ignoring notification %s", method)

    async def peer_closed(self, peer: Connection) -> None:
        close = self._uc.close()
        owned = self._channels.sessions_of(peer)
        await asyncio.gather(*(close.execute(session_id) for session_id in owned))
        for session_id in owned:
            self._release(session_id, peer)

    async def reattach(self, session_id: str, peer: Connection) -> None:
        """A connection taken up again after a restart gets its session's live updates.
        (Stand-in for the attach of several connections per session: like a reconnecting
        client's load, it moves an idle session here; one running elsewhere stays.)"""
        owner = self._channels.peer_of(session_id)
        if owner is None or owner is peer or not self._uc.busy(session_id):
            self._channels.attach(session_id, peer)

    def _release(self, session_id: str, peer: Connection) -> None:
        """Detach a session from `peer`, unless another connection took it over meanwhile."""
        if self._channels.peer_of(session_id) is peer:
            self._channels.detach(session_id)

    async def _initialize(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        return handle_initialize(self._uc.initialize, params, peer)

    async def _authenticate(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.AuthenticateRequest, params, "authenticate")
        if request.method_id != API_KEY_METHOD:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown authentication method {request.method_id!r}.",
                {"field": "methodId", "available": [API_KEY_METHOD]},
            )
        if not self._uc.has_credentials():
            raise RpcError(
                AUTH_REQUIRED,
                f"No API key found: start the agent with {self._uc.key_variable} "
                "(or IAC_CODE_API_KEY) set.",
                {"methodId": API_KEY_METHOD},
            )
        return wire.dump(acp.AuthenticateResponse())

    async def _logout(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """Forget what this connection's `authenticate` established: nothing, today. The
        only method checks the key the server was started with, which is the server's, not
        the client's: it stays, and requests that need it keep working, or keep answering
        auth-required when the server has none, exactly as before `authenticate`."""
        parse_params(acp.LogoutRequest, params, "logout")
        return wire.dump(acp.LogoutResponse())

    async def _new_session(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.NewSessionRequest, _no_mcp_default(params), "session/new")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        state = await self._uc.new_session().execute(
            NewSessionRequest(cwd=request.cwd, opening=opening)
        )
        self._channels.attach(state.session_id, peer)
        return self._announcing(state.session_id, wire.new_session_result(state))

    async def _load_session(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.LoadSessionRequest, _no_mcp_default(params), "session/load")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        after = await self._check_cursor(request.session_id, params)
        previous = self._take_over(request.session_id, peer)  # the replay goes to this client
        try:
            with self._channels.replaying(request.session_id, silent=after is not None):
                state = await self._uc.load_session().execute(
                    LoadSessionRequest(
                        session_id=request.session_id, cwd=request.cwd, opening=opening
                    )
                )
            await self._send_missed(request.session_id, after, peer)
        except BaseException:
            self._give_back(request.session_id, previous)
            raise
        return self._announcing(request.session_id, wire.load_session_result(state))

    async def _check_cursor(self, session_id: str, params: dict[str, Any] | None) -> int | None:
        """A load/resume cursor (`_meta.iac_code.after`) the journal can serve, or None."""
        after = cursor_of(params)
        if after is not None:
            await self._send_missed(session_id, after, None)
        return after

    async def _send_missed(
        self, session_id: str, after: int | None, peer: Connection | None
    ) -> None:
        """The journaled updates after `after`, to `peer` only (None: only check them)."""
        if after is None:
            return
        if self._journal is None:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: this server keeps no journal; session/load without a cursor.",
                {"reason": "cursor_expired", "sessionId": session_id},
            )
        try:
            missed = await self._journal.missed(session_id, after)
        except CursorExpired as exc:
            raise expired_error(exc) from None
        if peer is not None:
            for update in missed:
                await peer.send_notification("session/update", update)

    def _announcing(self, session_id: str, result: dict[str, Any]) -> AnswerThen:
        """The result, then the session's commands and context usage: a client routes a
        session's updates once it has the response that named the session."""
        return AnswerThen(result, lambda: self._uc.announce().execute(session_id))

    def _take_over(self, session_id: str, peer: Connection) -> Connection | None:
        """Attach a session to `peer`. An idle session opened on another connection moves
        here (a reconnecting client); one running a prompt there stays where it is."""
        owner = self._refuse_if_running_elsewhere(session_id, peer)
        self._channels.attach(session_id, peer)
        return owner

    def _refuse_if_running_elsewhere(self, session_id: str, peer: Connection) -> Connection | None:
        """Load, resume and fork read a session's history: not while another connection's
        prompt is writing it. Returns the session's current connection."""
        owner = self._channels.peer_of(session_id)
        if owner is not None and owner is not peer and self._uc.busy(session_id):
            raise RpcError(
                INVALID_PARAMS,
                f"Session {session_id!r} is running a prompt on another connection.",
                {"sessionId": session_id},
            )
        return owner

    def _give_back(self, session_id: str, owner: Connection | None) -> None:
        if owner is None:
            self._channels.detach(session_id)
        else:
            self._channels.attach(session_id, owner)

    def _check_owner(self, session_id: str, peer: Connection) -> None:
        """Each connection sees the sessions it opened: another one's are not open here."""
        owner = self._channels.peer_of(session_id)
        if owner is not None and owner is not peer:
            raise RpcError(
                INVALID_PARAMS,
                f"Session {session_id!r} is not open on this connection: load or resume it "
                "here first.",
                {"sessionId": session_id},
            )

    async def _prompt(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.PromptRequest, params, "session/prompt")
        if not request.prompt:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: prompt needs at least one block.",
                {"field": "prompt"},
            )
        self._check_owner(request.session_id, peer)
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        result = await self._uc.prompt().execute(
            PromptRequest(session_id=request.session_id, content=content)
        )
        if self._journal is not None:  # the turn's last updates: written now, not later
            self._journal.flush_soon()
        return wire.dump(
            acp.PromptResponse(
                stop_reason=result.stop_reason.value, usage=wire.usage_to_acp(result.usage)
            )
        )

    async def _set_mode(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.SetSessionModeRequest, params, "session/set_mode")
        self._check_owner(request.session_id, peer)
        await self._uc.set_mode().execute(
            SetModeRequest(session_id=request.session_id, mode_id=request.mode_id)
        )
        return wire.dump(acp.SetSessionModeResponse())

    async def _set_config_option(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        model: type[
            acp.SetSessionConfigOptionBooleanRequest | acp.SetSessionConfigOptionSelectRequest
        ] = (
            acp.SetSessionConfigOptionBooleanRequest
            if (params or {}).get("type") == "boolean"
            else acp.SetSessionConfigOptionSelectRequest
        )
        request = parse_params(model, params, "session/set_config_option")
        self._check_owner(request.session_id, peer)
        state = await self._uc.set_config_option().execute(
            SetConfigOptionRequest(
                session_id=request.session_id, option_id=request.config_id, value=request.value
            )
        )
        return wire.set_config_result(state)

    async def _close(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.CloseSessionRequest, params, "session/close")
        self._check_owner(request.session_id, peer)  # another connection's is not ours to close
        await self._uc.close().execute(request.session_id)
        self._release(request.session_id, peer)
        return wire.dump(acp.CloseSessionResponse())

    async def _list(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.ListSessionsRequest, params, "session/list")
        if request.cwd is not None and not os.path.isabs(request.cwd):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: cwd must be an absolute path.",
                {"field": "cwd", "cwd": request.cwd},
            )
        page = await self._uc.list_sessions().execute(request.cwd, request.cursor)
        return wire.list_result(page)

    async def _resume(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.ResumeSessionRequest, _no_mcp_default(params), "session/resume")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        after = await self._check_cursor(request.session_id, params)
        previous = self._take_over(request.session_id, peer)
        try:
            state = await self._uc.resume_session().execute(
                request.session_id, request.cwd, opening
            )
            await self._send_missed(request.session_id, after, peer)
        except BaseException:
            self._give_back(request.session_id, previous)
            raise
        return self._announcing(request.session_id, wire.resume_session_result(state))

    async def _fork(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.ForkSessionRequest, _no_mcp_default(params), "session/fork")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        self._refuse_if_running_elsewhere(request.session_id, peer)
        state = await self._uc.fork_session().execute(request.session_id, request.cwd, opening)
        self._channels.attach(state.session_id, peer)
        return self._announcing(state.session_id, wire.fork_session_result(state))

    async def _delete(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.DeleteSessionRequest, params, "session/delete")
        self._check_owner(request.session_id, peer)
        await self._uc.delete_session().execute(request.session_id)
        self._channels.detach(request.session_id)
        return wire.dump(acp.DeleteSessionResponse())

    async def _rename(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        session_id, title = (params or {}).get("sessionId"), (params or {}).get("title")
        if not isinstance(session_id, str) or not isinstance(title, str):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: sessionId and title must be strings.",
                {"method": RENAME_METHOD, "fields": ["sessionId", "title"]},
            )
        self._check_owner(session_id, peer)
        return {"title": await self._uc.rename_session().execute(session_id, title)}
