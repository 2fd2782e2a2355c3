"""Requests routed to the replica running a session's turn (issue 32).

A request that only the turn's replica can apply (a permission answer, a steering message,
a setting changed mid-turn) is written to the database (routed_requests) and its holder
(the replica holding the session's turn lease) is told on its own channel; the holder
claims it (applied once), applies it as it would its own client's request, writes the
outcome (the result, or the JSON-RPC error the local path gives) and tells the sender on
the sender's channel. Signals are at most once: each side also reads the database, the
holder after a resync, the sender every `poll` seconds, and a sender whose holder stopped
holding the lease before claiming its request abandons it and answers with a clear error
(claiming and abandoning exclude each other: applied once or never).

Channels: `iac_code_rq_<replica hash>` (one per replica: requests for it, answers to its
own, cancel nudges) and `iac_code_rq_questions` (permission requests posted and settled,
questions.py). Payloads are small JSON objects naming rows; an
answer carries its outcome too when it fits (the sender then need not read the row).
"""

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from adapters.cluster.side_tasks import SideTasks
from adapters.cluster.signal_messages import decoded_signal
from adapters.protocol.jsonrpc import INTERNAL_ERROR, RpcError
from adapters.protocol.replicas import NOT_ROUTED, HandBack
from application.ports.clock import Clock
from application.ports.cluster_signals import MAX_PAYLOAD, ClusterSignals, Unsubscribe
from application.ports.leases import TurnLeases
from application.ports.routed_requests import RequestState, RoutedRequest, RoutedRequests
from domain.ids import SessionId

log = logging.getLogger(__name__)

PREFIX = "iac_code_rq_"
QUESTIONS_CHANNEL = PREFIX + "questions"

# The holder applies (method, params) as its own client's request; raises RpcError.
Apply = Callable[[str, dict[str, Any]], Awaitable[Any]]
Poke = Callable[[SessionId], None]  # look at the session's lease now (a cancel was asked)


def channel_of(replica: str) -> str:
    """The replica's own channel: a replica id may hold any character, a channel not."""
    return PREFIX + hashlib.sha256(replica.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingTerms:
    replica_id: str
    poll: float = 1.0  # how often a waiting sender reads its request's row
    # How long a request its holder claimed may stay unanswered once the holder's lease is
    # gone (it may be finishing it) before the sender answers that the holder stopped.
    grace: float = 30.0


class RequestRouter:
    def __init__(
        self,
        *,
        store: RoutedRequests,
        signals: ClusterSignals,
        leases: TurnLeases,
        clock: Clock,
        terms: RoutingTerms,
    ) -> None:
        self._store = store
        self._signals = signals
        self._leases = leases
        self._clock = clock
        self._terms = terms
        self._me = terms.replica_id
        self._apply: Apply | None = None
        self._poke: Poke = lambda _session_id: None
        # Our requests, by id: rung when answered, with the outcome when the signal held it.
        self._answered: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._side = SideTasks("routing", log)
        self._unsubscribe: Unsubscribe | None = None

    async def start(self, apply: Apply, poke: Poke) -> None:
        """Listen on this replica's channel: requests to apply, answers to ours, nudges."""
        self._apply, self._poke = apply, poke
        await self._store.sweep(self._me)  # a previous process of this id left them
        self._unsubscribe = await self._signals.subscribe(
            channel_of(self._me), self._on_message, self._on_resync
        )
        self._side.spawn(self._serve_pending())  # sent while this replica was not listening

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            await self._unsubscribe()
        self._side.cancel_all()

    # -- the sender's side ---------------------------------------------------------------

    async def to_holder(self, session_id: str, method: str, params: dict[str, Any]) -> Any:
        """The outcome of `method` applied by the replica running the session's turn, or
        NOT_ROUTED when none runs on another replica. Raises the holder's RpcError, an
        RpcError when the holder stopped first, or HandBack."""
        holder = await self.holder_elsewhere(session_id)
        if holder is None:
            return NOT_ROUTED
        return await self.to_replica(holder, session_id, method, params)

    async def holder_elsewhere(self, session_id: str) -> str | None:
        """The other replica running the session's turn, if one does."""
        holder = await self._leases.live_holder(SessionId(session_id), self._clock.now())
        return None if holder == self._me else holder

    async def to_replica(
        self, holder: str, session_id: str, method: str, params: dict[str, Any]
    ) -> Any:
        request = RoutedRequest(
            id=uuid.uuid4().hex,
            session_id=session_id,
            holder=holder,
            sender=self._me,
            method=method,
            params=params,
        )
        self._answered[request.id] = asyncio.get_running_loop().create_future()
        settled = False
        try:
            await self._store.send(request, self._clock.now())
            await self._tell(holder, {"op": "request", "id": request.id})
            outcome = await self._outcome(request)
            settled = True
        finally:
            self._answered.pop(request.id, None)
            if not settled:  # cancelled (its client left): a pending request is never applied
                self._side.spawn(self._store.forget(request.id))
        return _read(outcome)

    async def nudge_cancel(self, holder: str, session_id: SessionId) -> None:
        """Tell `holder` that a cancel of the session's turn waits in its lease: it looks
        now rather than at its next poll (which stays the safety net)."""
        await self._tell(holder, {"op": "cancel", "session": session_id})

    async def _outcome(self, request: RoutedRequest) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        answered = self._answered[request.id]
        gone_since: float | None = None
        while True:
            with contextlib.suppress(TimeoutError):  # a signal may be lost: the row says
                await asyncio.wait_for(asyncio.shield(answered), self._terms.poll)
            if answered.done():
                if (carried := answered.result()) is not None:  # no need to read the row
                    self._side.spawn(self._store.forget(request.id))
                    return carried
                self._answered[request.id] = loop.create_future()  # a resync rings it again
                answered = self._answered[request.id]
            progress = await self._store.progress(request.id)
            if progress is None:
                raise RpcError(INTERNAL_ERROR, "The routed request was lost.", _about(request))
            if progress.state is RequestState.DONE and progress.outcome is not None:
                await self._store.forget(request.id)
                return progress.outcome
            if await self._holds(request):
                gone_since = None
                continue
            if progress.state is RequestState.PENDING and await self._store.abandon(request.id):
                await self._store.forget(request.id)
                raise _holder_stopped(request)
            gone_since = loop.time() if gone_since is None else gone_since
            if loop.time() - gone_since > self._terms.grace:
                raise _holder_stopped(request)

    async def _holds(self, request: RoutedRequest) -> bool:
        now = self._clock.now()
        return await self._leases.live_holder(SessionId(request.session_id), now) == request.holder

    # -- the holder's side ---------------------------------------------------------------

    def _on_message(self, payload: str) -> None:
        message = decoded_signal(payload, "routing", "op")
        if message is None:
            return
        op, key = message["op"], message.get("id") or message.get("session")
        if op == "request":
            self._side.spawn(self._serve(str(key)))
        elif op == "answered":
            answered = self._answered.get(str(key))
            outcome = message.get("outcome")
            if answered is not None and not answered.done():
                answered.set_result(outcome if isinstance(outcome, dict) else None)
        elif op == "cancel":
            self._poke(SessionId(str(key)))

    def _on_resync(self) -> None:
        """Signals may have been missed: serve what waits, and every waiting sender reads
        its row now."""
        self._side.spawn(self._serve_pending())
        for answered in self._answered.values():
            if not answered.done():
                answered.set_result(None)

    async def _serve_pending(self) -> None:
        for request_id in await self._store.pending_for(self._me):
            await self._serve(request_id)

    async def _serve(self, request_id: str) -> None:
        request = await self._store.claim(request_id, self._me)
        if request is None or self._apply is None:
            return  # served already, abandoned by its sender, or not ours
        try:
            outcome: dict[str, Any] = {"result": await self._apply(request.method, request.params)}
        except RpcError as exc:
            outcome = {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
        except HandBack:
            outcome = {"handBack": True}
        except Exception:
            log.exception("applying a routed %s failed", request.method)
            outcome = {"error": {"code": INTERNAL_ERROR, "message": "Internal error", "data": None}}
        await self._store.finish(request.id, outcome)
        answered = {"op": "answered", "id": request.id, "outcome": outcome}
        if len(json.dumps(answered).encode()) > MAX_PAYLOAD:  # too big: the sender reads it
            answered = {"op": "answered", "id": request.id}
        await self._tell(request.sender, answered)

    # -- both ----------------------------------------------------------------------------

    async def _tell(self, replica: str, message: dict[str, Any]) -> None:
        await self._signals.publish(channel_of(replica), json.dumps(message))


def _read(outcome: dict[str, Any]) -> Any:
    if outcome.get("handBack"):
        raise HandBack
    if isinstance(error := outcome.get("error"), dict):
        raise RpcError(
            int(error.get("code", INTERNAL_ERROR)), str(error.get("message")), error.get("data")
        )
    return outcome.get("result")


def _about(request: RoutedRequest) -> dict[str, Any]:
    return {"sessionId": request.session_id, "method": request.method, "replica": request.holder}


def _holder_stopped(request: RoutedRequest) -> RpcError:
    return RpcError(
        INTERNAL_ERROR,
        f"The replica running the turn of session {request.session_id!r} stopped before it "
        f"answered {request.method}; the turn ends once its lease lapses.",
        _about(request),
    )
