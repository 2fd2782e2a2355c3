"""ACP v1's agent side: the method table (each method's params model, its handler, and the
capabilities it stands for), the notifications, and the requests other replicas route to
this one's turns.

The dispatcher (adapters.protocol.dispatch) reads each request's params through its
route's model and hands the handler the typed request. The handlers call a use case or
the room (application.attachments.room: who is attached, who may act, what follows as
clients come and go) and render the result: the turns in turns.py, the rest of a
session's methods in session_methods.py, the methods that open one in openers.py."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from acp import schema as acp

from adapters.acp_v1.auth import authenticate, logout, naming_sign_in
from adapters.acp_v1.auth_methods import method_ids
from adapters.acp_v1.dropped_queues import DroppedQueues
from adapters.acp_v1.handshake import handle_initialize
from adapters.acp_v1.methods import (
    ALIASES,
    CANCELLED_BY,
    EDIT_PROMPT_METHOD,
    METHODS,
    RENAME_METHOD,
    REWIND_METHOD,
    REWIND_UNDO_METHOD,
    STEER_METHOD,
)
from adapters.acp_v1.openers import Openers
from adapters.acp_v1.params import no_mcp_default
from adapters.acp_v1.questions import V1_QUESTIONS
from adapters.acp_v1.requests import (
    ConfigOptionParams,
    EditPromptParams,
    RenameParams,
    RewindParams,
    RewindUndoParams,
    SteeringParams,
)
from adapters.acp_v1.session_methods import SessionMethods
from adapters.acp_v1.turns import TurnMethods
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.dispatch import (
    Call,
    MethodTable,
    Params,
    Route,
    by_hand,
    parse_params,
    route,
)
from adapters.protocol.errors import being_closed, mapped
from adapters.protocol.journal import UpdateJournal
from adapters.protocol.jsonrpc import METHOD_NOT_FOUND, RpcError
from adapters.protocol.opening_flow import OpeningFlow
from adapters.protocol.question_wire import QuestionWire
from adapters.protocol.received import ReceivedPrompt, ReceivedPrompts
from adapters.protocol.replicas import QUEUED_METHOD, HandBack, OneProcess, Replicas
from adapters.protocol.revival import Restores
from adapters.protocol.use_cases import UseCases
from application.attachments.ownership import Role
from application.attachments.room import Attachments
from application.errors import ApplicationError, SessionNotFound
from domain.images import DEFAULT_MAX_IMAGE_BYTES

log = logging.getLogger(__name__)

PROMPT = "session/prompt"


class AcpAgent(Dispatcher, Restores):
    """The method handlers. Who may act on which session, and what follows as clients
    come and go, is the room's; nothing here decides it."""

    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments[Connection],
        channels: SessionChannels,
        *,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        journal: UpdateJournal | None = None,
        replicas: Replicas | None = None,
    ) -> None:
        self._uc = use_cases
        self._room = room
        # The other replicas sharing the database (their turns, their clients' follows).
        replicas = replicas or OneProcess()
        self._received = ReceivedPrompts()  # prompts read, not yet answered
        # A queue lost with a process that died is told to the clients that come back.
        held_elsewhere = replicas.held_elsewhere
        dropped = None if journal is None else DroppedQueues(use_cases, journal, held_elsewhere)
        self._flow = OpeningFlow(
            use_cases, room, channels, journal, replicas, None if dropped is None else dropped.check
        )
        self._turns = TurnMethods(
            use_cases,
            room,
            replicas,
            self._received,
            journal=journal,
            max_image_bytes=max_image_bytes,
        )
        self._sessions = SessionMethods(use_cases, room, replicas, self._received)
        self._table = MethodTable(self._routes(Openers(self._flow, use_cases, room)), ALIASES)
        self.routes = self._table.routes

    def _routes(self, openers: Openers) -> dict[str, Route[Any]]:
        """Every method with the model its params are read with, and its handler."""
        turns, sessions, opening = self._turns, self._sessions, no_mcp_default
        return self._advertised(
            {
                "initialize": by_hand(self._initialize),
                "authenticate": route(acp.AuthenticateRequest, self._authenticate),
                "logout": route(acp.LogoutRequest, self._logout),
                "session/new": route(acp.NewSessionRequest, openers.new, prepare=opening),
                "session/load": route(acp.LoadSessionRequest, openers.load, prepare=opening),
                PROMPT: route(acp.PromptRequest, turns.prompt),
                "session/set_mode": route(acp.SetSessionModeRequest, sessions.set_mode),
                "session/set_config_option": route(ConfigOptionParams, sessions.set_config_option),
                "session/close": route(acp.CloseSessionRequest, sessions.close),
                "session/list": route(acp.ListSessionsRequest, sessions.list_sessions),
                "session/resume": route(acp.ResumeSessionRequest, openers.resume, prepare=opening),
                "session/fork": route(acp.ForkSessionRequest, openers.fork, prepare=opening),
                "session/delete": route(acp.DeleteSessionRequest, sessions.delete),
                RENAME_METHOD: route(RenameParams, sessions.rename),
                STEER_METHOD: route(SteeringParams, turns.steer),
                REWIND_METHOD: route(RewindParams, sessions.rewind),
                REWIND_UNDO_METHOD: route(RewindUndoParams, sessions.rewind_undo),
                EDIT_PROMPT_METHOD: route(EditPromptParams, turns.edit_prompt),
            }
        )

    @staticmethod
    def _advertised(routes: dict[str, Route[Any]]) -> dict[str, Route[Any]]:
        """The method table with each method's capabilities; every method must be listed
        in methods.py (the source of the advertised capabilities), and every listed one
        routed."""
        if set(routes) != set(METHODS):
            raise RuntimeError(f"routes and METHODS differ: {set(routes) ^ set(METHODS)}")
        return {method: replace(r, capabilities=METHODS[method]) for method, r in routes.items()}

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        """A prompt is registered as received at once, in arrival order: a cancel or close
        read right behind it, even before its task first runs, applies to it; an idle
        session is kept for a queueing client's, so a prompt read right behind it waits
        whichever of the two reaches its turn first."""
        session_id = (params or {}).get("sessionId")
        if self._table.canonical(method) == PROMPT and isinstance(session_id, str):
            received = self._received.receive(session_id, params)
            self._turns.reserve(received, peer)
            return self._serve_received(received, params, peer)
        return self.handle_request(method, params, peer)

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        found = self._table.find(method)
        try:
            return await mapped(self._table.call(found, method, params, peer))
        except RpcError as exc:
            raise naming_sign_in(exc, self._sign_in_methods(peer)) from exc.__cause__

    async def _serve_received(
        self, received: ReceivedPrompt, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        try:
            if received.late:
                raise being_closed(received.session_id)
            request = self._table.parse(PROMPT, params)
            return await mapped(self._turns.prompt(request, Call(PROMPT, params, peer), received))
        except RpcError as exc:
            raise naming_sign_in(exc, self._sign_in_methods(peer)) from exc.__cause__
        finally:
            self._turns.unreserve(received)
            self._received.answered(received)

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: Connection) -> bool:
        """`$/cancel_request` of a prompt waiting in its session's queue: it leaves it."""
        session_id = (params or {}).get("sessionId")
        if self._table.canonical(method) != PROMPT or not isinstance(session_id, str):
            return False
        received = self._received.find(session_id, params)
        return received is not None and self._turns.queued.withdraw(received)

    def cancelled_by(self, method: str) -> str | None:
        return CANCELLED_BY.get(method)

    def question_wire(self) -> QuestionWire:
        return V1_QUESTIONS

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        if method != "session/cancel":
            log.debug("ignoring notification %s", method)
            return
        request = parse_params(acp.CancelNotification, params, method)
        if (parent := self._uc.cancel().parent_of(request.session_id)) is not None:
            if self._room.may_cancel(parent, peer):  # a sub-agent's child session, alone
                self._uc.cancel().child(request.session_id)
            return
        if not self._room.may_cancel(request.session_id, peer):
            return
        if self._received.cancel(request.session_id):  # begun or not
            # Its turn is here (or has not begun): another process's lease is not asked,
            # where a late request would cancel the next turn.
            self._uc.cancel().execute(request.session_id)
            return
        try:
            await self._uc.cancel().anywhere(request.session_id)
        except ApplicationError as exc:  # a notification has no answer to carry it
            log.warning("session/cancel of %s failed: %s", request.session_id, exc)

    async def peer_closed(self, peer: Connection) -> None:
        """The connection went away (DELETE, EOF, idle expiry, a dropped socket): it
        detaches (the room decides what follows for the sessions it leaves)."""
        await self._room.client_gone(peer)

    async def restore_attachment(
        self, peer: Connection, session_id: str, cwd: str | None = None, *, tell_state: bool = True
    ) -> Role:
        """Attach `peer` without a replay: a connection restored after a server restart
        (adapters.protocol.opening_flow.OpeningFlow.restore)."""
        return await self._flow.restore(peer, session_id, cwd, tell_state=tell_state)

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None:
        """A session made before this agent loaded (early_new.py)."""
        await self._flow.take_over(peer, session_id, cwd)

    async def announce(self, session_id: str) -> None:
        await self._flow.announce(session_id)

    async def _initialize(self, params: Params, call: Call) -> Any:
        return handle_initialize(self._uc.initialize, params, call.peer)

    async def _authenticate(self, request: acp.AuthenticateRequest, call: Call) -> Any:
        offered = self._sign_in_methods(call.peer)
        return authenticate(request, offered, self._uc.has_credentials, self._uc.key_variable)

    def _sign_in_methods(self, peer: Connection) -> list[str]:
        """The sign-in methods `initialize` offered this connection."""
        return method_ids(self._uc.initialize.execute(1), peer.client_capabilities)

    async def _logout(self, request: acp.LogoutRequest, call: Call) -> Any:
        return logout()

    # -- requests another replica routed here, where the session's turn runs ---------------

    async def apply_routed(self, method: str, params: dict[str, Any]) -> Any:
        """Applied as its own client's would be (the sender checked that its client may
        act). A session no longer open here (its turn ended and its clients left) hands it
        back: the sender's replica applies it, as when no turn runs elsewhere."""
        appliers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "session/set_mode": self._apply_set_mode,
            "session/set_config_option": self._apply_config_option,
            STEER_METHOD: self._apply_steer,
            QUEUED_METHOD: self._apply_queued,
        }
        apply = appliers.get(method)
        if apply is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not routed: {method}", {"method": method})
        return await mapped(_open_here(apply(params)))

    async def _apply_set_mode(self, params: dict[str, Any]) -> Any:
        return await self._sessions.apply_set_mode(self._table.parse("session/set_mode", params))

    async def _apply_config_option(self, params: dict[str, Any]) -> Any:
        request = self._table.parse("session/set_config_option", params)
        return await self._sessions.apply_config_option(request)

    async def _apply_steer(self, params: dict[str, Any]) -> Any:
        return await self._turns.apply_steer(self._table.parse(STEER_METHOD, params))

    async def _apply_queued(self, routed: dict[str, Any]) -> Any:
        request = self._table.parse(PROMPT, routed.get("prompt"))
        queued_by = str(routed.get("queuedBy") or "a client")
        return await self._turns.apply_queued(request, queued_by)


async def _open_here(applying: Awaitable[Any]) -> Any:
    try:
        return await applying
    except SessionNotFound as exc:
        raise HandBack from exc
