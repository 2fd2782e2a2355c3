"""Requests that must reach the replica running a session's turn, and the permission
requests that replica asks, as the replicas sharing one database see them.

A routed request goes from its sender to the holder of the session's turn lease; the
holder claims it (applied once), writes its outcome, and the sender reads it. A request
nobody claimed can be abandoned by its sender (its holder died): claiming and abandoning
exclude each other, so it is applied once or never, and the sender knows which.
"""

from abc import abstractmethod
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol


class RequestState(StrEnum):
    PENDING = "pending"  # sent, not yet claimed
    CLAIMED = "claimed"  # the holder is applying it
    DONE = "done"  # applied; the outcome is written
    ABANDONED = "abandoned"  # its sender gave up before anyone claimed it: never applied


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutedRequest:
    id: str
    session_id: str
    holder: str  # the replica meant to apply it
    sender: str  # the replica awaiting its outcome
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RequestProgress:
    state: RequestState
    outcome: dict[str, Any] | None = None  # once DONE


@dataclass(frozen=True, slots=True, kw_only=True)
class AskedQuestion:
    """A permission request pending on `holder`, the replica running the turn, as the
    cluster serialized it (`kind` names the serialization: a replica reads only its own)."""

    id: str
    session_id: str
    holder: str
    subject: str  # the tool call it is about
    kind: str
    body: dict[str, Any]


class RoutedRequests(Protocol):
    @abstractmethod
    async def send(self, request: RoutedRequest, now: datetime) -> None:
        """Store the request, pending."""

    @abstractmethod
    async def claim(self, request_id: str, holder: str) -> RoutedRequest | None:
        """Pending -> claimed by `holder`, once: None when already claimed, abandoned,
        gone, or meant for another holder."""

    @abstractmethod
    async def finish(self, request_id: str, outcome: dict[str, Any]) -> None:
        """Claimed -> done, with its outcome."""

    @abstractmethod
    async def progress(self, request_id: str) -> RequestProgress | None:
        """Where the request stands (None: no such request)."""

    @abstractmethod
    async def abandon(self, request_id: str) -> bool:
        """Pending -> abandoned. False: it was claimed first (or is gone)."""

    @abstractmethod
    async def forget(self, request_id: str) -> None:
        """The sender has its answer: the row goes."""

    @abstractmethod
    async def pending_for(self, holder: str) -> list[str]:
        """The ids of the requests waiting for `holder` (read after missed signals)."""

    @abstractmethod
    async def sweep(self, replica: str) -> None:
        """`replica` is starting: what a previous process of that id left behind goes (its
        own requests, whose senders are gone; its questions, whose turns are gone)."""

    @abstractmethod
    async def post_question(self, question: AskedQuestion, now: datetime) -> None:
        """A permission request is pending on its holder."""

    @abstractmethod
    async def settle_question(self, question_id: str) -> None:
        """It was decided (or withdrawn): no replica shows it any more."""

    @abstractmethod
    async def question(self, question_id: str) -> AskedQuestion | None: ...

    @abstractmethod
    async def questions_of(self, session_id: str, now: datetime) -> list[AskedQuestion]:
        """The session's pending questions whose holder still holds a live lease on it
        (a dead holder's are no longer asked)."""
