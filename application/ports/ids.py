from abc import abstractmethod
from typing import Protocol

from domain.ids import MessageId, SessionId


class IdGenerator(Protocol):
    @abstractmethod
    def session_id(self) -> SessionId: ...

    @abstractmethod
    def message_id(self) -> MessageId: ...
