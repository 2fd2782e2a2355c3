"""The PermissionAsker the turn uses: a tool call's permission request is the room's
question to every client attached to its session, the first answer winning. How a client
shows it is its own business (the protocol version renders it)."""

from typing import Generic, TypeVar

from application.attachments.room import Attachments
from application.ports.clients import Client
from application.ports.permissions import PermissionAsker, PermissionRequest
from application.ports.questions import PermissionQuestion
from domain.ids import SessionId
from domain.permission import PermissionOption

C = TypeVar("C", bound=Client)


class RoomPermissions(PermissionAsker, Generic[C]):
    def __init__(self, room: Attachments[C]) -> None:
        self._room = room

    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        answer = await self._room.ask_permission(PermissionQuestion(session_id, request))
        return answer.option
