"""The cluster as the protocol core sees it (adapters.protocol.replicas.Replicas), for
replicas sharing PostgreSQL: requests routed to the replica running a turn (routing.py), a
session's updates followed across replicas (relay.py), and permission requests shown on
every replica (questions.py).

It registers itself from its own side as it starts: with the channels (numbered updates
are forwarded through it), the room (relay.py, questions.py), and the router, which
applies what other replicas route here with the dispatcher's `apply`."""

from collections.abc import Callable
from typing import Any

from adapters.cluster.questions import ANSWER_METHOD, RelayedQuestions
from adapters.cluster.relay import ClusterRelay
from adapters.cluster.routing import Apply, Poke, RequestRouter
from adapters.protocol.channels import SessionChannels
from adapters.protocol.replicas import (
    NOT_ROUTED,
    QUEUED_METHOD,
    HandBack,
    HeldElsewhere,
    Replicas,
)
from application.attachments.turn_state import TurnState
from domain.ids import SessionId


class ClusterReplicas(Replicas):
    def __init__(
        self,
        *,
        relay: ClusterRelay,
        router: RequestRouter,
        questions: RelayedQuestions,
        channels: SessionChannels,
        held_elsewhere: HeldElsewhere,
    ) -> None:
        self._relay = relay
        self._router = router
        self._questions = questions
        self._channels = channels
        self._held_elsewhere = held_elsewhere

    async def start(self, apply: Apply, poke: Poke) -> None:
        """Follow and forward updates, then serve what other replicas route to this one's
        turns (`apply`: the dispatcher's; `poke`: look at a session's lease now), and show
        their permission requests to this one's clients."""
        self._channels.replicate_through(self)
        await self._relay.start()

        async def applied(method: str, params: dict[str, Any]) -> Any:
            if method == ANSWER_METHOD:  # a question's answer: taken here if it is the first
                return self._questions.answered_here(params)
            return await apply(method, params)

        await self._router.start(applied, poke)
        await self._questions.start()

    async def aclose(self) -> None:
        await self._relay.aclose()  # leaves the registry: no lease to wait out

    async def nudge_cancel(self, holder: str, session_id: SessionId) -> None:
        """A cancel of a turn `holder` runs waits in its lease: it looks now."""
        await self._router.nudge_cancel(holder, session_id)

    # -- the protocol core's port ----------------------------------------------------------

    async def to_holder(self, session_id: str, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self._router.to_holder(session_id, method, params)
        except HandBack:
            return NOT_ROUTED

    async def queue_on_holder(
        self, session_id: str, queued: dict[str, Any], routed: Callable[[], None]
    ) -> Any:
        holder = await self._router.holder_elsewhere(session_id)
        if holder is None:
            return NOT_ROUTED
        routed()
        try:
            return await self._router.to_replica(holder, session_id, QUEUED_METHOD, queued)
        except HandBack:
            return NOT_ROUTED

    async def held_elsewhere(self, session_id: str) -> bool:
        return await self._held_elsewhere(session_id)

    async def follow(self, session_id: str) -> TurnState | None:
        return await self._relay.watch(session_id)

    def forward(self, session_id: str, params: dict[str, Any]) -> None:
        self._relay.forward(session_id, params)
