"""How a protocol version shows the application's questions to a client and reads their
answers: the face (e.g. adapters/acp_v1) says, through its dispatcher; the connection
sends the request and withdraws it (`$/cancel_request`) the version-neutral way."""

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: the connection imports this on the start path
    from application.ports.questions import Answer, Question


class QuestionWire(Protocol):
    @abstractmethod
    def request(self, question: "Question") -> tuple[str, dict[str, Any]]:
        """The request that shows it: its method and params."""

    @abstractmethod
    def answer(self, question: "Question", result: Any) -> "Answer":
        """The client's result, read. Never raises: what cannot be read is read as the
        safe answer (a rejection, a dismissal), and logged."""
