"""Asks the clients with `session/request_permission` and reads the answer, in the official
shape or the product documents' shorthand.

Every connection attached to the session gets its own copy (its own request id), one that
attaches while the request is pending too. The first answer wins, whatever it says
("cancelled" included); the other copies are withdrawn with `$/cancel_request`. A copy
answered with an error leaves the others waiting; when no copy is left and none could be
answered, the request is unavailable (the tool does not run), as with one client. Copies
lost with their connection are not errors: the request waits for the next client to attach,
up to the permission timeout (the caller's bound).
"""

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import CallWithdrawn, Connection, ConnectionClosed, OutgoingCall
from adapters.protocol.jsonrpc import RpcError
from adapters.protocol.wire import permission_request
from application.ports.permissions import (
    PermissionAsker,
    PermissionRequest,
    PermissionUnavailable,
)
from domain.ids import SessionId
from domain.permission import PermissionOption

log = logging.getLogger(__name__)


def read_outcome(result: Any, request: PermissionRequest) -> PermissionOption | None:
    """The chosen option, None for cancelled. Anything not offered counts as a rejection.

    Official: {"outcome": {"outcome": "selected", "optionId": "allow_once"}} or
    {"outcome": {"outcome": "cancelled"}}. Shorthand: {"outcome": "allowed",
    "option_id": "allow_once"} or {"outcome": "denied"}.
    """
    offered = {request.option_id(o): o for o in request.options}
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict):
        kind, option_id = outcome.get("outcome"), outcome.get("optionId")
    else:
        kind, option_id = outcome, result.get("option_id") if isinstance(result, dict) else None
        if kind == "denied" and option_id is None:
            return PermissionOption.REJECT_ONCE
        if kind == "allowed" and option_id is None:
            option_id = request.option_id(PermissionOption.ALLOW_ONCE)
    if kind == "cancelled":
        return None
    if kind in ("selected", "allowed", "denied") and option_id in offered:
        chosen = offered[option_id]
        # "denied" never grants: an allow option id beside it is read as a plain rejection.
        return chosen if kind != "denied" or not chosen.allows else PermissionOption.REJECT_ONCE
    if kind == "denied":
        return PermissionOption.REJECT_ONCE
    log.warning("permission answer %r did not pick an offered option; treated as rejected", result)
    return PermissionOption.REJECT_ONCE


@dataclass(slots=True, eq=False)
class _Ask:
    """One pending permission request and its copies, one per connection."""

    params: dict[str, Any]
    request: PermissionRequest
    answer: "asyncio.Future[PermissionOption | None]"
    copies: dict[Connection, OutgoingCall | None] = field(default_factory=dict)
    waiting: set["asyncio.Task[None]"] = field(default_factory=set)
    errors: int = 0
    failure: str = ""  # the last copy's error, for the refusal the model is told
    sending: bool = True  # the first copies are still going out: too early to give up

    async def send_to(self, peer: Connection) -> None:
        if peer in self.copies or self.answer.done():
            return
        self.copies[peer] = None  # claimed: a concurrent go-live sends no second copy
        try:
            call = await peer.start_call("session/request_permission", self.params)
        except ConnectionClosed:
            del self.copies[peer]
            return
        except RpcError as exc:  # its transport cannot carry it (over the event size limit)
            log.warning("could not send the permission request to a client: %s", exc.message)
            self.copies.pop(peer, None)
            self.failed(exc.message)
            return
        if peer not in self.copies or self.answer.done():
            # Decided (or the peer left) while the copy was on its way: withdraw it too,
            # or that client's dialog waits for an answer nobody reads.
            self.copies.pop(peer, None)
            await call.withdraw()
            return
        self.copies[peer] = call
        task = asyncio.ensure_future(self._read(peer, call))
        self.waiting.add(task)
        task.add_done_callback(self.waiting.discard)

    async def _read(self, peer: Connection, call: OutgoingCall) -> None:
        try:
            result = await call.result()
        except (CallWithdrawn, asyncio.CancelledError):
            return
        except ConnectionClosed:
            self.copies.pop(peer, None)  # the next client to attach gets its copy
            return
        except RpcError as exc:
            log.warning(
                "client answered the permission request with error %s: %s", exc.code, exc.message
            )
            self.copies.pop(peer, None)
            self.failed(exc.message)
            return
        # A copy no longer in `copies` was withdrawn (its client left): its answer is late.
        if not self.answer.done() and self.copies.get(peer) is call:
            del self.copies[peer]  # the winner: nothing to withdraw
            self.answer.set_result(read_outcome(result, self.request))

    def failed(self, reason: str) -> None:
        self.errors += 1
        self.failure = reason
        self.give_up_if_none_left()

    def give_up_if_none_left(self) -> None:
        """No copy is left to answer and one failed: unavailable (the tool does not run).
        Not while the first copies are still being sent."""
        if not self.copies and self.errors and not self.sending and not self.answer.done():
            self.answer.set_exception(
                PermissionUnavailable(
                    f"the client could not show the permission request ({self.failure})"
                )
            )

    def leave(self, peer: Connection) -> "asyncio.Task[None] | None":
        """`peer` left the session: its copy no longer counts (withdrawn, a late answer
        ignored). The request then waits for the others, or for the next client."""
        call = self.copies.pop(peer, None)
        if call is None:
            return None
        return asyncio.ensure_future(call.withdraw())  # its reader ends with CallWithdrawn

    async def withdraw_rest(self) -> None:
        for call in list(self.copies.values()):
            if call is not None:
                await call.withdraw()
        self.copies.clear()
        for task in list(self.waiting):
            task.cancel()


class AcpPermissionAsker(PermissionAsker):
    def __init__(self, channels: SessionChannels) -> None:
        self._channels = channels
        self._pending: dict[str, _Ask] = {}
        self._leaving: set[asyncio.Task[None]] = set()
        channels.on_live(self._peer_live)
        channels.on_left(self._peer_left)

    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        ask = _Ask(
            permission_request(session_id, request),
            request,
            asyncio.get_running_loop().create_future(),
        )
        self._pending[session_id] = ask
        self._channels.set_awaiting(session_id, str(request.tool_call_id))
        try:
            for peer in self._channels.live_peers(session_id):
                await ask.send_to(peer)
            ask.sending = False
            ask.give_up_if_none_left()
            return await ask.answer
        finally:
            if self._pending.get(session_id) is ask:
                del self._pending[session_id]
                self._channels.set_awaiting(session_id, None)
            await asyncio.shield(ask.withdraw_rest())

    async def _peer_live(self, session_id: str, peer: Connection) -> None:
        """A client attached while a request waits: it gets its own copy."""
        ask = self._pending.get(session_id)
        if ask is not None:
            await ask.send_to(peer)

    def _peer_left(self, session_id: str, peer: Connection) -> None:
        ask = self._pending.get(session_id)
        task = ask.leave(peer) if ask is not None else None
        if task is not None:
            self._leaving.add(task)
            task.add_done_callback(_forget_withdrawal(self._leaving))


def _forget_withdrawal(tasks: set["asyncio.Task[None]"]) -> Any:
    def done(task: "asyncio.Task[None]") -> None:
        tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("withdrawing a permission copy failed: %r", exc)

    return done
