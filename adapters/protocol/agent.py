"""The ACP agent side: every protocol method, its params model, and what it calls.

A handler parses its params, calls a use case or the room (application.attachments.room:
who is attached, who may act, what follows as clients come and go), and renders the
result. The methods that open a session for a client are in adapters.protocol.openers;
the live updates go out through the channels (adapters.protocol.channels)."""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from acp import schema as acp
from pydantic import BaseModel

from adapters.protocol import wire
from adapters.protocol.attachments import prompt_content
from adapters.protocol.auth import authenticate, logout, naming_sign_in
from adapters.protocol.auth_methods import method_ids
from adapters.protocol.channels import SessionChannels
from adapters.protocol.child_sessions import listed_parent
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.dropped_queues import HeldElsewhere
from adapters.protocol.errors import being_closed, mapped
from adapters.protocol.handshake import handle_initialize
from adapters.protocol.journal import UpdateJournal
from adapters.protocol.jsonrpc import METHOD_NOT_FOUND, RpcError
from adapters.protocol.methods import (
    ALIASES,
    EDIT_PROMPT_METHOD,
    METHODS,
    RENAME_METHOD,
    REWIND_METHOD,
    REWIND_UNDO_METHOD,
    STEER_METHOD,
    Capability,
)
from adapters.protocol.openers import Openers
from adapters.protocol.params import (
    check_list_cwd,
    check_prompt,
    config_option_model,
    edit_prompt_params,
    parse_params,
    rename_params,
    rewind_params,
    rewind_undo_params,
    steering_params,
)
from adapters.protocol.queued_turns import QueuedTurns
from adapters.protocol.queueing import queue_command, queues_prompts
from adapters.protocol.received import ReceivedPrompt, ReceivedPrompts
from adapters.protocol.relayed_questions import ANSWER_METHOD, RelayedQuestions
from adapters.protocol.rewind_wire import rewound_result
from adapters.protocol.routing import NOT_ROUTED, HandBack, RequestRouter
from adapters.protocol.use_cases import UseCases
from application.attachments.ownership import Role
from application.attachments.room import Attachments
from application.dto import PromptResult
from application.errors import ApplicationError, SessionNotFound
from application.runtime import CLOSE_GRACE
from application.use_cases.prompt import PromptRequest
from application.use_cases.session_settings import SetConfigOptionRequest, SetModeRequest
from application.use_cases.steering import SteerRequest
from domain.images import DEFAULT_MAX_IMAGE_BYTES

log = logging.getLogger(__name__)

# A queueing client's prompt routed to the replica running the session's turn.
QUEUED_METHOD = "$/iac_code/queued_prompt"

Handler = Callable[[dict[str, Any] | None, Connection], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Route:
    """One method: the params model it reads (None: read by hand), its handler, and the
    `agentCapabilities` entries that advertise it (adapters.protocol.methods)."""

    params: type[BaseModel] | None
    handler: Handler
    capabilities: tuple[Capability, ...]


class AcpAgent(Dispatcher):
    """The method handlers. Who may act on which session, and what follows as clients
    come and go, is the room's; nothing here decides it."""

    def __init__(
        self,
        use_cases: UseCases,
        room: Attachments,
        channels: SessionChannels,
        *,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        journal: UpdateJournal | None = None,
        held_elsewhere: HeldElsewhere | None = None,
        router: RequestRouter | None = None,
        relayed: RelayedQuestions | None = None,
    ) -> None:
        self._uc = use_cases
        self._router = router  # None: one process, or replicas that signal nothing (SQLite)
        self._relayed = relayed
        self._room = room
        self._journal = journal
        self._max_image_bytes = max_image_bytes
        self._openers = Openers(use_cases, room, channels, journal, held_elsewhere)
        self._turns: set[asyncio.Future[Any]] = set()  # prompts, outliving their connection
        self._queued = QueuedTurns(use_cases, room, self._keep, journal)
        self._received = ReceivedPrompts()  # prompts read, not yet answered
        self.routes: dict[str, Route] = self._route(
            {
                "initialize": (None, self._initialize),
                "authenticate": (acp.AuthenticateRequest, self._authenticate),
                "logout": (acp.LogoutRequest, self._logout),
                "session/new": (acp.NewSessionRequest, self._openers.new),
                "session/load": (acp.LoadSessionRequest, self._openers.load),
                "session/prompt": (acp.PromptRequest, self._prompt),
                "session/set_mode": (acp.SetSessionModeRequest, self._set_mode),
                "session/set_config_option": (None, self._set_config_option),
                "session/close": (acp.CloseSessionRequest, self._close),
                "session/list": (acp.ListSessionsRequest, self._list),
                "session/resume": (acp.ResumeSessionRequest, self._openers.resume),
                "session/fork": (acp.ForkSessionRequest, self._openers.fork),
                "session/delete": (acp.DeleteSessionRequest, self._delete),
                RENAME_METHOD: (None, self._rename),
                STEER_METHOD: (None, self._steer),
                REWIND_METHOD: (None, self._rewind),
                REWIND_UNDO_METHOD: (None, self._rewind_undo),
                EDIT_PROMPT_METHOD: (None, self._edit_prompt),
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
            received = self._received.receive(session_id, params)
            return self._serve_received(received, params, peer)
        return self.handle_request(method, params, peer)

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        route = self.routes.get(ALIASES.get(method, method))
        if route is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        try:
            return await mapped(route.handler(params, peer))
        except RpcError as exc:
            raise naming_sign_in(exc, self._sign_in_methods(peer)) from exc.__cause__

    async def _serve_received(
        self, received: ReceivedPrompt, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        try:
            if received.late:
                raise being_closed(received.session_id)
            return await mapped(self._prompt(params, peer, received))
        except RpcError as exc:
            raise naming_sign_in(exc, self._sign_in_methods(peer)) from exc.__cause__
        finally:
            self._received.answered(received)

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: Connection) -> bool:
        """`$/cancel_request` of a prompt waiting in its session's queue: it leaves it."""
        session_id = (params or {}).get("sessionId")
        if ALIASES.get(method, method) != "session/prompt" or not isinstance(session_id, str):
            return False
        received = self._received.find(session_id, params)
        return received is not None and self._queued.withdraw(received)

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
        (adapters.protocol.openers.Openers.restore)."""
        return await self._openers.restore(peer, session_id, cwd, tell_state=tell_state)

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None:
        """A session made before this agent loaded (adapters/protocol/early_new.py)."""
        await self._openers.take_over(peer, session_id, cwd)

    async def announce(self, session_id: str) -> None:
        await self._openers.announce(session_id)

    async def _initialize(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        return handle_initialize(self._uc.initialize, params, peer)

    async def _authenticate(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        offered = self._sign_in_methods(peer)
        return authenticate(params, offered, self._uc.has_credentials, self._uc.key_variable)

    def _sign_in_methods(self, peer: Connection) -> list[str]:
        """The sign-in methods `initialize` offered this connection."""
        return method_ids(self._uc.initialize.execute(1), peer.client_capabilities)

    async def _logout(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        return logout(params)

    # -- acting on an open session -------------------------------------------------------

    async def _prompt(
        self,
        params: dict[str, Any] | None,
        peer: Connection,
        received: ReceivedPrompt | None = None,
    ) -> Any:
        request = parse_params(acp.PromptRequest, params, "session/prompt")
        check_prompt(request)
        session_id = request.session_id
        self._room.check_may_act(session_id, peer)
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        if received is not None and self._uc.queue().holds(session_id):
            # A turn runs (or others wait): `/queue` answers beside it; a client that
            # queues waits its turn; anyone else is refused busy by the turn, as before.
            if (argument := queue_command(content)) is not None:
                return _rendered(await self._queued.command(session_id, argument))
            if self._queued.applies(peer, session_id):
                return _rendered(await self._queued.run(peer, received, content))
        elif received is not None and queues_prompts(peer.client_capabilities):
            # The turn may run on another replica: the prompt waits in the queue there.
            routed = await self._queue_elsewhere(peer, received, params)
            if routed is not NOT_ROUTED:
                return routed
        control = received.control if received is not None else None
        turn = PromptRequest(session_id=session_id, content=content, control=control)
        async with self._room.prompting(session_id, peer):
            result = await self._run_turn(peer, self._uc.prompt().execute(turn))
        return _rendered(result)

    async def _run_turn(self, peer: Connection, work: Coroutine[Any, Any, PromptResult]) -> Any:
        """Run the turn in its own task: the connection that asked may go away (it only
        detaches), the turn goes on for the clients still attached."""
        turn = asyncio.ensure_future(work)
        self._keep(turn)
        if self._journal is not None:  # the turn's last updates: written now, not later
            journal = self._journal
            turn.add_done_callback(lambda _: journal.flush_soon())
        with self._room.waiting(peer):
            return await asyncio.shield(turn)

    async def _steer(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """A message into the running turn, or (no turn) the next turn's prompt. Any client
        that may act on the session may steer; a turn it begins makes it the controller,
        as a prompt would (application.attachments.ownership)."""
        request, idle = steering_params(params, STEER_METHOD)
        session_id = request.session_id
        self._room.check_may_act(session_id, peer)
        if (routed := await self._elsewhere(session_id, STEER_METHOD, params)) is not NOT_ROUTED:
            return routed
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        steer = SteerRequest(session_id=session_id, content=content, idle=idle)
        result = await self._uc.steer().execute(steer, lambda turn: self._begin_turn(peer, turn))
        return wire.steering_result(result)

    def _begin_turn(self, peer: Connection, request: PromptRequest) -> "asyncio.Future[Any]":
        """A turn a steering message begins: a prompt whose answer has nowhere to go (the
        steering request is answered once it has begun)."""

        async def prompted() -> Any:
            async with self._room.prompting(request.session_id, peer):
                return await self._run_turn(peer, self._uc.prompt().execute(request))

        task = asyncio.ensure_future(prompted())
        self._keep(task)
        return task

    def _keep(self, turn: "asyncio.Future[Any]") -> None:
        """Hold a turn's task until it is done (it may outlive the request that began it)."""
        self._turns.add(turn)
        turn.add_done_callback(_forget_turn(self._turns))

    async def _set_mode(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.SetSessionModeRequest, params, "session/set_mode")
        self._room.check_may_act(request.session_id, peer)
        routed = await self._elsewhere(request.session_id, "session/set_mode", params)
        return routed if routed is not NOT_ROUTED else await self._apply_set_mode(params)

    async def _apply_set_mode(self, params: dict[str, Any] | None) -> Any:
        request = parse_params(acp.SetSessionModeRequest, params, "session/set_mode")
        await self._uc.set_mode().execute(
            SetModeRequest(session_id=request.session_id, mode_id=request.mode_id)
        )
        return wire.dump(acp.SetSessionModeResponse())

    async def _set_config_option(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(config_option_model(params), params, "session/set_config_option")
        self._room.check_may_act(request.session_id, peer)
        method = "session/set_config_option"
        routed = await self._elsewhere(request.session_id, method, params)
        return routed if routed is not NOT_ROUTED else await self._apply_config_option(params)

    async def _apply_config_option(self, params: dict[str, Any] | None) -> Any:
        request = parse_params(config_option_model(params), params, "session/set_config_option")
        state = await self._uc.set_config_option().execute(
            SetConfigOptionRequest(
                session_id=request.session_id, option_id=request.config_id, value=request.value
            )
        )
        return wire.set_config_result(state)

    # -- requests routed to the replica running the turn (adapters.protocol.routing) -----

    async def _elsewhere(self, session_id: str, method: str, params: dict[str, Any] | None) -> Any:
        """The outcome of the request from the replica running the session's turn, if
        another one runs it; NOT_ROUTED when it is this replica's to apply (its turn runs
        here or nowhere, or the other replica handed it back)."""
        if self._router is None or self._uc.queue().holds(session_id):
            return NOT_ROUTED  # no replicas to ask, or the turn runs here: no read needed
        try:
            return await self._router.to_holder(session_id, method, params or {})
        except HandBack:
            return NOT_ROUTED

    async def _queue_elsewhere(
        self, peer: Connection, received: ReceivedPrompt, params: dict[str, Any] | None
    ) -> Any:
        """A queueing client's prompt while another replica runs the session's turn: it
        waits in that replica's queue and runs there; NOT_ROUTED when no turn runs
        elsewhere (or the holder handed it back: its turn ended meanwhile)."""
        if self._router is None:
            return NOT_ROUTED
        holder = await self._router.holder_elsewhere(received.session_id)
        if holder is None:
            return NOT_ROUTED
        self._received.answered(received)  # a session/cancel now is for the running turn
        queued = {"prompt": params, "queuedBy": peer.client_name or "a client"}
        try:
            return await self._router.to_replica(holder, received.session_id, QUEUED_METHOD, queued)
        except HandBack:
            return NOT_ROUTED

    async def apply_routed(self, method: str, params: dict[str, Any]) -> Any:
        """A request another replica routed here, where the session's turn runs: applied
        as its own client's would be (the sender checked that its client may act). A
        session no longer open here (its turn ended and its clients left) hands it back:
        the sender's replica applies it, as when no turn runs elsewhere."""
        if method == ANSWER_METHOD and self._relayed is not None:
            return self._relayed.answered_here(params)
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

    async def _apply_steer(self, params: dict[str, Any]) -> Any:
        """Into the turn running here; a message it ended without goes back to its sender
        (HandBack), whose replica begins the next turn with it for its client."""
        request, idle = steering_params(params, STEER_METHOD)
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        steer = SteerRequest(session_id=request.session_id, content=content, idle=idle)
        result = await self._uc.steer().execute(steer, _hand_back)
        return wire.steering_result(result)

    async def _apply_queued(self, routed: dict[str, Any]) -> Any:
        """A queueing client's prompt from another replica: it waits in this turn's queue
        and runs here; the turn ended meanwhile, it goes back (HandBack)."""
        params = routed.get("prompt")
        request = parse_params(acp.PromptRequest, params, "session/prompt")
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        queued_by = str(routed.get("queuedBy") or "a client")
        turn = asyncio.ensure_future(
            self._queued.run_routed(request.session_id, content, queued_by)
        )
        self._keep(turn)  # it runs on should the routing wait be cancelled
        result = await asyncio.shield(turn)
        if result is None:
            raise HandBack
        return _rendered(result)

    async def _close(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """Detach the sender; the session is closed (its turn cancelled) when the last
        attached client closes it, or by anyone while nobody is attached."""
        request = parse_params(acp.CloseSessionRequest, params, "session/close")
        if self._room.close_by(request.session_id, peer):
            # Prompts received before the close answer `cancelled` first, however recent.
            async with self._received.closing(request.session_id, CLOSE_GRACE):
                await self._uc.close().execute(request.session_id)
        return wire.dump(acp.CloseSessionResponse())

    async def _list(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.ListSessionsRequest, params, "session/list")
        check_list_cwd(request.cwd)
        parent = listed_parent(request.field_meta)
        page = await self._uc.list_sessions().execute(request.cwd, request.cursor, parent)
        return wire.list_result(page)

    async def _delete(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        request = parse_params(acp.DeleteSessionRequest, params, "session/delete")
        self._room.check_may_act(request.session_id, peer)
        await self._uc.delete_session().execute(request.session_id)
        self._room.forget(request.session_id)
        return wire.dump(acp.DeleteSessionResponse())

    async def _rename(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        session_id, title = rename_params(params, RENAME_METHOD)
        self._room.check_may_act(session_id, peer)
        return {"title": await self._uc.rename_session().execute(session_id, title)}

    async def _rewind(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        session_id, to_message_id, files = rewind_params(params, REWIND_METHOD)
        self._room.check_may_act(session_id, peer)
        rewound = await self._uc.rewind_session().execute(session_id, to_message_id, files=files)
        return rewound_result(rewound)

    async def _rewind_undo(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        session_id, token = rewind_undo_params(params, REWIND_UNDO_METHOD)
        self._room.check_may_act(session_id, peer)
        return {"messageCount": await self._uc.rewind_session().undo(session_id, token)}

    async def _edit_prompt(self, params: dict[str, Any] | None, peer: Connection) -> Any:
        """A rewind to the prompt `messageId`, then the new prompt on the cut history, as
        one operation: no other prompt comes between them. Answered as session/prompt."""
        message_id, request, files = edit_prompt_params(params, EDIT_PROMPT_METHOD)
        session_id = request.session_id
        self._room.check_may_act(session_id, peer)
        content = await prompt_content(request.prompt, max_image_bytes=self._max_image_bytes)
        async with self._room.prompting(session_id, peer):
            edit = self._uc.edit_prompt().execute(session_id, message_id, content, files=files)
            result = await self._run_turn(peer, edit)
        return _rendered(result)


async def _open_here(applying: Awaitable[Any]) -> Any:
    try:
        return await applying
    except SessionNotFound as exc:
        raise HandBack from exc


def _hand_back(request: PromptRequest) -> "asyncio.Future[Any]":
    """No turn here for a routed steering message: its sender's replica begins one."""
    handed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    handed.set_exception(HandBack())
    return handed


def _rendered(result: PromptResult) -> Any:
    return wire.dump(
        acp.PromptResponse(
            stop_reason=result.stop_reason.value, usage=wire.usage_to_acp(result.usage)
        )
    )


def _forget_turn(turns: set["asyncio.Future[Any]"]) -> Callable[["asyncio.Future[Any]"], None]:
    def done(turn: "asyncio.Future[Any]") -> None:
        turns.discard(turn)
        if not turn.cancelled():
            turn.exception()  # retrieved: the handler that awaited it may be gone

    return done
