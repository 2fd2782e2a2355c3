"""`session/request_permission` with several clients: a copy each, the first answer wins,
the other copies are withdrawn with `$/cancel_request`, late attachers get their copy."""

import asyncio
import json
from typing import Any

import pytest

from adapters.acp_v1.questions import V1_QUESTIONS
from adapters.acp_v1.rendering import V1Rendering
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.question_wire import QuestionWire
from application.attachments.permissions import RoomPermissions
from application.attachments.room import Attachments
from application.ports.permissions import PermissionRequest, PermissionUnavailable
from domain.ids import SessionId, ToolCallId
from domain.permission import PermissionOption
from domain.tool_call import ToolKind

SID = SessionId("s1")
REQUEST = PermissionRequest(
    tool_call_id=ToolCallId("call-1"),
    tool_name="bash",
    title="Run ls",
    kind=ToolKind.EXECUTE,
    arguments={"command": "ls"},
    locations=(),
    preview=(),
)


class Idle(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass

    def question_wire(self) -> QuestionWire:
        return V1_QUESTIONS


class Client:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.asked = asyncio.Event()
        self.connection = Connection(self._send, Idle())

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message.get("method") == "session/request_permission":
            self.asked.set()

    def request(self) -> dict[str, Any]:
        return next(m for m in self.sent if m.get("method") == "session/request_permission")

    def withdrawn(self) -> list[Any]:
        return [
            m["params"]["requestId"] for m in self.sent if m.get("method") == "$/cancel_request"
        ]

    async def answer(self, result: Any) -> None:
        reply = {"jsonrpc": "2.0", "id": self.request()["id"], "result": result}
        await self.connection.receive(json.dumps(reply))

    async def fail(self) -> None:
        error = {"code": -32603, "message": "no dialog here"}
        reply = {"jsonrpc": "2.0", "id": self.request()["id"], "error": error}
        await self.connection.receive(json.dumps(reply))


async def settle() -> None:
    """Let every task that can run now run (the answer's reader, the asker)."""
    for _ in range(10):
        await asyncio.sleep(0)


SELECTED = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing here closes a session")


def setup(*clients: Client) -> tuple[Attachments, SessionChannels, RoomPermissions]:
    room = Attachments(close=_never_closed, busy=lambda _: True)
    for client in clients:
        room.attach(SID, client.connection)
    return room, SessionChannels(room, V1Rendering()), RoomPermissions(room)


async def test_every_client_gets_a_copy_and_the_first_answer_withdraws_the_others() -> None:
    a, b = Client(), Client()
    _room, channels, asker = setup(a, b)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(asyncio.gather(a.asked.wait(), b.asked.wait()), 5)
    assert channels.turn_state(SID) == {"state": "awaiting_permission", "toolCallId": "call-1"}
    assert a.request()["params"] == b.request()["params"]
    await b.answer(SELECTED)
    assert await asyncio.wait_for(asking, 5) is PermissionOption.ALLOW_ONCE
    assert a.withdrawn() == [a.request()["id"]]
    assert b.withdrawn() == []
    assert channels.turn_state(SID) == {"state": "running"}
    await a.answer(SELECTED)  # too late: ignored, nothing breaks


async def test_an_error_from_one_client_leaves_the_others_to_answer() -> None:
    a, b = Client(), Client()
    _, _, asker = setup(a, b)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(asyncio.gather(a.asked.wait(), b.asked.wait()), 5)
    await a.fail()
    await settle()
    assert not asking.done()
    await b.answer({"outcome": "denied"})
    assert await asyncio.wait_for(asking, 5) is PermissionOption.REJECT_ONCE


async def test_an_error_from_the_only_client_makes_the_request_unavailable() -> None:
    a = Client()
    _, _, asker = setup(a)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(a.asked.wait(), 5)
    await a.fail()
    with pytest.raises(PermissionUnavailable):
        await asyncio.wait_for(asking, 5)


async def test_with_nobody_attached_the_request_waits_for_the_next_client() -> None:
    _room, channels, asker = setup()
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await settle()
    assert not asking.done()
    late = Client()
    attaching = channels.begin_attach(SID, late.connection)
    await attaching.go_live()
    first = late.sent[0]["params"]
    assert first["_meta"]["iac_code"]["turn"] == {
        "state": "awaiting_permission",
        "toolCallId": "call-1",
    }
    await late.answer(SELECTED)
    assert await asyncio.wait_for(asking, 5) is PermissionOption.ALLOW_ONCE


async def test_a_client_that_disconnects_leaves_the_request_to_the_next_one() -> None:
    a = Client()
    room, channels, asker = setup(a)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(a.asked.wait(), 5)
    room.detach(SID, a.connection)
    await a.connection.close()
    await settle()
    assert not asking.done()  # not unavailable: someone may still come
    b = Client()
    await channels.begin_attach(SID, b.connection).go_live()
    await b.answer(SELECTED)
    assert await asyncio.wait_for(asking, 5) is PermissionOption.ALLOW_ONCE


async def test_a_request_given_up_withdraws_every_copy() -> None:
    a, b = Client(), Client()
    _, _, asker = setup(a, b)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(asyncio.gather(a.asked.wait(), b.asked.wait()), 5)
    asking.cancel()  # the turn was cancelled, or the permission timeout passed
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert a.withdrawn() == [a.request()["id"]]
    assert b.withdrawn() == [b.request()["id"]]
