"""The ACP agent side: every protocol method, its params model, and the use case it calls."""

import asyncio
import collections
import contextlib
import logging
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from acp import schema as acp
from pydantic import BaseModel, ValidationError

from adapters.protocol import wire
from adapters.protocol.attachments import prompt_content
from adapters.protocol.channels import Attaching, SessionChannels
from adapters.protocol.connection import AnswerThen, Connection, Dispatcher
from adapters.protocol.detached import DetachedSessions, Schedule, call_later
from adapters.protocol.errors import to_rpc_error
from adapters.protocol.handshake import API_KEY_METHOD, handle_initialize
from adapters.protocol.journal import CursorExpired, UpdateJournal, cursor_of, expired_error
from adapters.protocol.jsonrpc import AUTH_REQUIRED, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from adapters.protocol.methods import ALIASES, METHODS, RENAME_METHOD, Capability
from adapters.protocol.opening import session_opening
from adapters.protocol.ownership import NotAttached, Role
from adapters.protocol.received import ReceivedPrompt, ReceivedPrompts
from application.errors import ApplicationError, AuthRequired, SessionBusy, SessionNotFound
from application.runtime import CLOSE_GRACE, TurnControl
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

Handler = Callable[[dict[str, Any] | None, Connection], Awaitable[Any]]
DEFAULT_DETACHED_TURN_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class Route:
    """One method: the params model it reads (None: read by hand), its handler, and the
    `agentCapabilities` entries that advertise it (adapters.protocol.methods)."""

    params: type[BaseModel] | None
    handler: Handler
    capabilities: tuple[Capability, ...]


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
    """The method handlers. Who may act on which session is asked of the channels'
    `Ownership` (adapters.protocol.ownership); nothing here decides it."""

    def __init__(
        self,
        use_cases: UseCases,
        channels: SessionChannels,
        *,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        detached_turn_timeout: float = DEFAULT_DETACHED_TURN_TIMEOUT,
        schedule: Schedule = call_later,
        journal: UpdateJournal | None = None,
    ) -> None:
        self._uc = use_cases
        self._journal = journal
        self._channels = channels
        self._max_image_bytes = max_image_bytes
        self._detached = DetachedSessions(
            detached_turn_timeout, self._expire_detached, schedule=schedule
        )
        self._turns: set[asyncio.Task[Any]] = set()  # prompts, outliving their connection
        self._waiting: dict[Connection, set[asyncio.Task[Any]]] = {}  # handlers awaiting them
        # Connections gone (peer_closed ran): a call of theirs still in flight that attaches
        # them afterwards must detach them again, or the session keeps a dead peer.
        self._gone: weakref.WeakSet[Connection] = weakref.WeakSet()
        # Sessions a load/resume/restore is attaching a client to (it has not attached yet),
        # and those of them the last client left meanwhile (closed only if it fails).
        self._arriving: collections.Counter[str] = collections.Counter()
        # (True: its last client closed it with session/close, which cancels a turn.)
        self._left_while_arriving: dict[str, bool] = {}
        self._received = ReceivedPrompts()  # prompts read, not yet answered
        self.routes: dict[str, Route] = self._route(
            {
                "initialize": (None, self._initialize),
                "authenticate": (acp.AuthenticateRequest, self._authenticate),
                "logout": (acp.LogoutRequest, self._logout),
                "session/new": (acp.NewSessionRequest, self._new_session),
                "session/load": (acp.LoadSessionRequest, self._load_session),
                "session/prompt": (acp.PromptRequest, self._prompt),
                "session/set_mode": (acp.SetSessionModeRequest, self._set_mode),
                "session/set_config_option": (None, self._set_config_option),
                "session/close": (acp.CloseSessionRequest, self._close),
                "session/list": (acp.ListSessionsRequest, self._list),
                "session/resume": (acp.ResumeSessionRequest, self._resume),
                "session/fork": (acp.ForkSessionRequest, self._fork),
                "session/delete": (acp.DeleteSessionRequest, self._delete),
                RENAME_METHOD: (None, self._rename),
            }
        )

    @staticmethod
    def _route(
        handlers: dict[str, tuple[type[BaseModel] | None, Handler]],
    ) -> dict[str, Route]:
        """The method table; every method must be listed in adapters.protocol.methods (the
        source of the advertised capabilities), and every listed one routed."""
        if set(handlers) != set(METHODS):
            raise RuntimeError(f"routes and METHODS differ: {set(handlers) ^ set(METHODS)}")
        return {
            method: Route(model, handler, METHODS[method])
            for method, (model, handler) in handlers.items()
        }

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        """A prompt is registered as received at once, in arrival order: a cancel or close
        read right behind it, even before its task first runs, applies to it."""
        session_id = (params or {}).get("sessionId")
        if ALIASES.get(method, method) == "session/prompt" and isinstance(session_id, str):
            return self._serve_received(self._received.receive(session_id), params, peer)
        return self.handle_request(method, params, peer)

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        route = self.routes.get(ALIASES.get(method, method))
        if route is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        return await _mapped(route.handler(params, peer))

    async def _serve_received(
        self, received: ReceivedPrompt, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        try:
            if received.late:
                raise _being_closed(received.session_id)
            return await _mapped(self._prompt(params, peer, received.control))
        finally:
            self._received.answered(received)

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        if method == "session/cancel":
            request = parse_params(acp.CancelNotification, params, method)
            # Any attached client may cancel (anyone, while none is attached).
            if self._channels.ownership.may_cancel(request.session_id, peer):
                if self._received.cancel(request.session_id):  # begun or not
                    # Its turn is here (or has not begun): another process's lease is
                    # not asked, where a late request would cancel the next turn.
                    self._uc.cancel().execute(request.session_id)
                    return
                try:
                    await self._uc.cancel().anywhere(request.session_id)
                except ApplicationError as exc:  # a notification has no answer to carry it
                    log.warning("session/cancel of %s failed: %s", request.session_id, exc)
        else:
            log.debug("ignoring notification %s", method)

    async def peer_closed(self, peer: Connection) -> None:
        """The connection went away (DELETE, EOF, idle expiry, a dropped socket): it
        detaches. A session nobody is left attached to is closed when idle; a running one
        gets IAC_CODE_DETACHED_TURN_TIMEOUT for a client to come back."""
        self._gone.add(peer)
        for task in self._waiting.pop(peer, set()):
            task.cancel()  # its prompt's answer has nowhere to go; the turn itself goes on
        await self._leave(self._channels.sessions_of(peer), peer)

    async def _leave(self, session_ids: list[str], peer: Connection) -> None:
        alone = [sid for sid in session_ids if self._channels.detach(sid, peer)]
        await asyncio.gather(*(self._left_alone(sid) for sid in alone))

    async def _left_alone(self, session_id: str) -> None:
        """Nobody is attached any more: an idle session is closed, a running turn gets the
        detached clock. Not while a client's load or resume of it is under way: that
        client is about to attach (and would be given a closed session)."""
        if self._arriving[session_id]:
            self._left_while_arriving.setdefault(session_id, False)
        elif self._uc.busy(session_id):
            self._detached.start(session_id)
        else:
            await self._uc.close().execute(session_id)

    async def _unless_gone(self, session_id: str, peer: Connection) -> None:
        """`peer` was just attached by a call that was in flight as it went away: it
        leaves again, as it would have had the call been quicker."""
        if peer in self._gone and self._channels.ownership.is_attached(session_id, peer):
            await self._leave([session_id], peer)

    async def restore_attachment(
        self, peer: Connection, session_id: str, cwd: str | None = None, *, tell_state: bool = True
    ) -> Role:
        """Attach `peer` to a session without a replay: a connection restored after a
        server restart (its missed updates come from the update log). With `cwd`, the
        session is first opened from storage if this process does not have it open (as
        `session/resume` would; raises SessionNotFound). The peer gets the turn state
        first, and its copy of a pending permission request."""
        async with self._coming_back(session_id):
            if cwd is not None:
                await self._uc.resume_session().execute(session_id, cwd)
        attaching = self._channels.begin_attach(session_id, peer)
        if not tell_state:  # the caller tells it (with what it missed, first)
            attaching.feed.told_state = True
        await attaching.go_live()
        await self._unless_gone(session_id, peer)
        return self._channels.ownership.role_of(session_id, peer) or Role.OBSERVER

    @contextlib.asynccontextmanager
    async def _coming_back(self, session_id: str) -> AsyncIterator[None]:
        """A client is attaching: the detached clock stops now, not once the session is
        read (the deadline passing meanwhile would close the session it is being given).
        Should the attach fail, a turn still left alone gets its clock again."""
        self._detached.stop(session_id)
        self._arriving[session_id] += 1
        try:
            yield
        except BaseException:
            self._arrived(session_id)
            if not self._channels.ownership.peers_of(session_id) and not self._arriving[session_id]:
                closed = self._left_while_arriving.pop(session_id, None)
                if closed:
                    await self._uc.close().execute(session_id)
                elif closed is not None or self._uc.busy(session_id):
                    await self._left_alone(session_id)
            raise
        self._arrived(session_id)
        self._left_while_arriving.pop(session_id, None)  # the arriving client attaches now

    def _arrived(self, session_id: str) -> None:
        self._arriving[session_id] -= 1
        if not self._arriving[session_id]:
            del self._arriving[session_id]

    async def _expire_detached(self, session_id: str) -> None:
        if not self._channels.ownership.peers_of(session_id):
            await self._uc.close().execute(session_id)

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
        role = self._channels.attach(state.session_id, peer)
        await self._unless_gone(state.session_id, peer)
        return self._announcing(state.session_id, _with_role(wire.new_session_result(state), role))

    async def _load_session(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """Attach `peer` (idle or mid-turn): the stored history to it alone, then live."""
        request = parse_params(acp.LoadSessionRequest, _no_mcp_default(params), "session/load")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        async with self._coming_back(request.session_id):
            after = await self._check_cursor(request.session_id, params)
            loaded = await self._uc.load_session().prepare(
                LoadSessionRequest(session_id=request.session_id, cwd=request.cwd, opening=opening)
            )
        # No await since the history was read: what is emitted from now on is not in it.
        attaching = self._channels.begin_attach(request.session_id, peer)
        try:
            if after is not None:  # what it missed instead of the whole history
                await self._send_missed(request.session_id, after, attaching)
            else:
                for event in loaded.replay:
                    await attaching.emit(request.session_id, event)  # type: ignore[arg-type]
        except BaseException:
            await attaching.abort()
            raise
        result = wire.load_session_result(loaded.state)
        return self._attached(request.session_id, peer, result, attaching)

    async def _check_cursor(self, session_id: str, params: dict[str, Any] | None) -> int | None:
        """A load/resume cursor (`_meta.iac_code.after`) the journal can serve, or None;
        one it cannot is refused before anything is attached."""
        after = cursor_of(params)
        if after is not None:
            await self._missed(session_id, after)
        return after

    async def _missed(self, session_id: str, after: int) -> list[dict[str, Any]]:
        if self._journal is None:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: this server keeps no journal; session/load without a cursor.",
                {"reason": "cursor_expired", "sessionId": session_id},
            )
        try:
            return await self._journal.missed(session_id, after)
        except CursorExpired as exc:
            raise expired_error(exc) from None

    async def _send_missed(self, session_id: str, after: int, attaching: Attaching) -> None:
        """The journaled updates after `after`, to the attaching client only; the live
        ones held back for it meanwhile that these include are then not sent again."""
        await attaching.send_missed(await self._missed(session_id, after))

    def _announcing(self, session_id: str, result: dict[str, Any]) -> AnswerThen:
        """The result, then the session's commands and context usage: a client routes a
        session's updates once it has the response that named the session."""
        return AnswerThen(result, lambda: self._uc.announce().execute(session_id))

    def _attached(
        self, session_id: str, peer: Connection, result: dict[str, Any], attaching: Attaching
    ) -> AnswerThen:
        """The result with the client's role; then, to this client only, the commands and
        context usage; then the live updates held back meanwhile, and from then on live."""

        async def then() -> None:
            try:
                await self._uc.announce().execute(session_id, sink=attaching)
            finally:
                await attaching.go_live()
                await self._unless_gone(session_id, peer)

        return AnswerThen(_with_role(result, self._role(session_id, peer)), then)

    def _role(self, session_id: str, peer: Connection) -> Role:
        return self._channels.ownership.role_of(session_id, peer) or Role.OBSERVER

    def _refuse_if_running_elsewhere(self, session_id: str, peer: Connection) -> None:
        """Fork reads a session's history: not while another connection's prompt is
        writing it (its controller may)."""
        controller = self._channels.peer_of(session_id)
        if controller is not None and controller is not peer and self._uc.busy(session_id):
            raise RpcError(
                INVALID_PARAMS,
                f"Session {session_id!r} is running a prompt on another connection.",
                {"sessionId": session_id},
            )

    def _check_may_act(self, session_id: str, peer: Connection) -> None:
        self._channels.ownership.check_may_act(session_id, peer)

    async def _prompt(
        self, params: dict[str, Any] | None, peer: Connection, control: TurnControl | None = None
    ) -> Any:
        request = parse_params(acp.PromptRequest, params, "session/prompt")
        if not request.prompt:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: prompt needs at least one block.",
                {"field": "prompt"},
            )
        session_id = request.session_id
        self._check_may_act(session_id, peer)
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        ownership = self._channels.ownership
        idle = not self._uc.busy(session_id)
        # A session nobody follows (its clients gone, its detached clock running) is
        # adopted by whoever prompts it: attached, it sees its turn, and the clock that was
        # for the earlier turn stops (it would cancel this one).
        adopting = idle and not ownership.peers_of(session_id)
        if adopting:
            self._channels.attach(session_id, peer)
            self._detached.stop(session_id)
            await self._unless_gone(session_id, peer)
        # A prompt accepted from an attached client makes it the controller; one refused
        # (busy, no key, not open) changes nothing.
        taking = ownership.is_attached(session_id, peer) and idle
        previous = ownership.take_control(session_id, peer) if taking else None
        try:
            result = await self._run_turn(
                peer, PromptRequest(session_id=session_id, content=content, control=control)
            )
        except (SessionBusy, AuthRequired, SessionNotFound):  # refused: never accepted
            if taking:
                ownership.give_back(session_id, peer, previous)
            if adopting:
                await self._leave([session_id], peer)
            raise
        except (ApplicationError, DomainError):
            if adopting:  # not run (e.g. not open here): nothing adopted
                await self._leave([session_id], peer)
            raise
        return wire.dump(
            acp.PromptResponse(
                stop_reason=result.stop_reason.value, usage=wire.usage_to_acp(result.usage)
            )
        )

    async def _run_turn(self, peer: Connection, request: PromptRequest) -> Any:
        """Run the turn in its own task: the connection that asked may go away (it only
        detaches), the turn goes on for the clients still attached."""
        turn = asyncio.ensure_future(self._uc.prompt().execute(request))
        self._turns.add(turn)
        turn.add_done_callback(_forget_turn(self._turns))
        if self._journal is not None:  # the turn's last updates: written now, not later
            journal = self._journal
            turn.add_done_callback(lambda _: journal.flush_soon())
        handler = asyncio.current_task()
        waiting = self._waiting.setdefault(peer, set())
        if handler is not None:
            waiting.add(handler)
        try:
            return await asyncio.shield(turn)
        finally:
            if handler is not None:
                waiting.discard(handler)

    async def _set_mode(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.SetSessionModeRequest, params, "session/set_mode")
        self._check_may_act(request.session_id, peer)
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
        self._check_may_act(request.session_id, peer)
        state = await self._uc.set_config_option().execute(
            SetConfigOptionRequest(
                session_id=request.session_id, option_id=request.config_id, value=request.value
            )
        )
        return wire.set_config_result(state)

    async def _close(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """Detach the sender; the session is closed (its turn cancelled) when the last
        attached client closes it, or by anyone while nobody is attached."""
        request = parse_params(acp.CloseSessionRequest, params, "session/close")
        session_id = request.session_id
        self._check_may_act(session_id, peer)  # another connection's is not ours to close
        attached = self._channels.ownership.is_attached(session_id, peer)
        if attached and not self._channels.detach(session_id, peer):
            return wire.dump(acp.CloseSessionResponse())  # others still follow it
        if attached and self._arriving[session_id]:  # another client is attaching: it stays
            self._left_while_arriving[session_id] = True
            return wire.dump(acp.CloseSessionResponse())
        self._detached.stop(session_id)
        # Prompts received before the close answer `cancelled` first, however recent.
        async with self._received.closing(session_id, CLOSE_GRACE):
            await self._uc.close().execute(session_id)
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
        """Attach `peer` (idle or mid-turn) without a replay: live from now."""
        request = parse_params(acp.ResumeSessionRequest, _no_mcp_default(params), "session/resume")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        async with self._coming_back(request.session_id):
            after = await self._check_cursor(request.session_id, params)
            state = await self._uc.resume_session().execute(
                request.session_id, request.cwd, opening
            )
        attaching = self._channels.begin_attach(request.session_id, peer)
        if after is not None:
            try:
                await self._send_missed(request.session_id, after, attaching)
            except BaseException:
                await attaching.abort()
                raise
        result = wire.resume_session_result(state)
        return self._attached(request.session_id, peer, result, attaching)

    async def _fork(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.ForkSessionRequest, _no_mcp_default(params), "session/fork")
        _check_cwd(request.cwd)
        opening = session_opening(params)
        self._refuse_if_running_elsewhere(request.session_id, peer)
        state = await self._uc.fork_session().execute(request.session_id, request.cwd, opening)
        role = self._channels.attach(state.session_id, peer)
        await self._unless_gone(state.session_id, peer)
        return self._announcing(state.session_id, _with_role(wire.fork_session_result(state), role))

    async def _delete(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.DeleteSessionRequest, params, "session/delete")
        self._check_may_act(request.session_id, peer)
        await self._uc.delete_session().execute(request.session_id)
        self._detached.stop(request.session_id)
        self._channels.forget(request.session_id)
        return wire.dump(acp.DeleteSessionResponse())

    async def _rename(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        session_id, title = (params or {}).get("sessionId"), (params or {}).get("title")
        if not isinstance(session_id, str) or not isinstance(title, str):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: sessionId and title must be strings.",
                {"method": RENAME_METHOD, "fields": ["sessionId", "title"]},
            )
        self._check_may_act(session_id, peer)
        return {"title": await self._uc.rename_session().execute(session_id, title)}


async def _mapped(handling: Awaitable[Any]) -> Any:
    """A handler's result, its errors as JSON-RPC errors."""
    try:
        return await handling
    except NotAttached as exc:
        raise _not_open_here(str(exc)) from exc
    except (ApplicationError, DomainError) as exc:
        raise to_rpc_error(exc) from exc


def _being_closed(session_id: str) -> RpcError:
    return to_rpc_error(
        SessionNotFound(f"Session {session_id!r} is being closed.", sessionId=session_id)
    )


def _not_open_here(session_id: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"Session {session_id!r} is not open on this connection: load or resume it here first.",
        {"sessionId": session_id},
    )


def _with_role(result: dict[str, Any], role: Role) -> dict[str, Any]:
    """Tell the client its role in the session: `_meta.iac_code.role`."""
    meta = dict(result.get("_meta") or {})
    meta["iac_code"] = {**(meta.get("iac_code") or {}), "role": role.value}
    return {**result, "_meta": meta}


def _forget_turn(turns: set["asyncio.Task[Any]"]) -> Callable[["asyncio.Task[Any]"], None]:
    def done(turn: "asyncio.Task[Any]") -> None:
        turns.discard(turn)
        if not turn.cancelled():
            turn.exception()  # retrieved: the handler that awaited it may be gone

    return done
