import uuid

from application.ports.ids import IdGenerator
from domain.ids import MessageId, SessionId


class UuidIds(IdGenerator):
    """Random ids: unguessable, so one client cannot address another's session by guessing."""

    def session_id(self) -> SessionId:
        return SessionId(f"sess_{uuid.uuid4().hex}")

    def message_id(self) -> MessageId:
        return MessageId(f"msg_{uuid.uuid4().hex}")
