"""What a client lends to the sessions it is attached to: it takes notifications, answers
requests (awaited, or withdrawn before it answers), and advertised what it can serve.

A client is a key: the room (application.attachments) holds clients by identity, in sets
and maps. The protocol core's connection is one; a client attached on another replica,
reached through that replica, can be another, behind this same port.
"""

from abc import abstractmethod
from typing import Any, Protocol


class ClientGone(Exception):
    """The client went away before it answered (or before the request could be sent)."""


class ClientFailed(Exception):
    """The client answered with an error, or its transport could not carry the request
    (e.g. over the size an event may have). `code`: the error's code (0: none given)."""

    def __init__(self, message: str, *, code: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class CallWithdrawn(Exception):
    """We withdrew our own request: no answer is awaited any more."""


class PendingCall(Protocol):
    """One request sent to a client: await its answer, or withdraw it."""

    @abstractmethod
    async def result(self) -> Any:
        """The answer. Raises ClientGone, ClientFailed, or CallWithdrawn once withdrawn."""

    @abstractmethod
    async def withdraw(self) -> None:
        """Stop waiting and tell the client (its dialog, say, closes). Idempotent."""


class Client(Protocol):
    # What it advertised when it connected (ACP `clientCapabilities`), as it sent it:
    # read by whoever needs it, who validates it.
    client_capabilities: Any

    def __hash__(self) -> int:
        """A client is a key by identity (equal only to itself): object's own hash, said
        here so that the type checker knows a client can be one."""
        return object.__hash__(self)

    @abstractmethod
    async def send_notification(self, method: str, params: dict[str, Any]) -> None:
        """Send without an answer; nothing happens once the client is gone."""

    @abstractmethod
    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and await its answer (raises ClientGone or ClientFailed)."""

    @abstractmethod
    async def start_call(self, method: str, params: dict[str, Any]) -> PendingCall:
        """Send a request; its answer is awaited, or the request withdrawn, through the
        handle. Raises ClientGone or ClientFailed when it cannot be sent."""


class SessionClients(Protocol):
    """Which client serves a session (its files and terminals, say): its controller."""

    @abstractmethod
    def controller_of(self, session_id: str) -> Client | None: ...
