"""What the application asks of a client attached to a session: to show a question (a
permission request, an elicitation) and give its answer, or to withdraw it.

A client is a key: the room (application.attachments) holds clients by identity, in sets
and maps. The protocol core's connection is one: how it shows a question, and sends the
session's updates, is the adapters' business (the application's updates go out through
its EventSink port, not through a client).
"""

from abc import abstractmethod
from typing import TYPE_CHECKING, Protocol, TypeVar

# Annotations only: the protocol core imports this port on the start path, where the
# questions' domain types (content, tools, permissions) are not needed yet.
if TYPE_CHECKING:
    from application.ports.questions import Answer, Question


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
    """We withdrew it ourselves (a question, or a request): no answer is awaited any more."""


class ShownQuestion(Protocol):
    """A question shown to one client: await its answer, or withdraw it."""

    @abstractmethod
    async def answer(self) -> "Answer":
        """The client's answer. Raises ClientGone, ClientFailed, or CallWithdrawn once
        withdrawn."""

    @abstractmethod
    async def withdraw(self) -> None:
        """Stop waiting and tell the client (its dialog, say, closes). Idempotent."""


class Client(Protocol):
    def __hash__(self) -> int:
        """A client is a key by identity (equal only to itself): object's own hash, said
        here so that the type checker knows a client can be one."""
        return object.__hash__(self)

    @abstractmethod
    async def show(self, question: "Question") -> ShownQuestion:
        """Show the question; its answer is awaited, or the question withdrawn, through the
        handle. Raises ClientGone or ClientFailed when it cannot be shown."""


C_co = TypeVar("C_co", bound=Client, covariant=True)


class SessionClients(Protocol[C_co]):
    """Which client serves a session (its files and terminals, say): its controller, of
    the kind the adapter holding the clients lends (e.g. a protocol connection)."""

    @abstractmethod
    def controller_of(self, session_id: str) -> C_co | None: ...
