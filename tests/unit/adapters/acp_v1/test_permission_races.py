"""Races around a pending permission request with several clients: a copy still being sent
when another client answers, and a client that left the session before answering."""

import asyncio
from typing import Any

import pytest

from adapters.acp_v1.rendering import V1Rendering
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection
from adapters.protocol.jsonrpc import RpcError
from application.attachments.permissions import RoomPermissions
from application.attachments.room import Attachments
from application.ports.permissions import PermissionUnavailable
from domain.permission import PermissionOption
from tests.unit.adapters.acp_v1.test_permission_fan_out import (
    REQUEST,
    SELECTED,
    SID,
    Client,
    _never_closed,
    settle,
)


class SlowClient(Client):
    """Its transport takes the permission request only when the test opens the gate (a
    WebSocket peer whose queue is full, an SSE stream not yet drained)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.sending = asyncio.Event()

    async def _send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/request_permission":
            self.sending.set()
            await self.gate.wait()
        await super()._send(message)


def attached(*clients: Client) -> tuple[Attachments, SessionChannels, RoomPermissions]:
    room = Attachments(close=_never_closed, busy=lambda _: True)
    for client in clients:
        room.attach(SID, client.connection)
    return room, SessionChannels(room, V1Rendering()), RoomPermissions(room)


async def test_a_copy_still_being_sent_when_another_client_answers_is_withdrawn() -> None:
    a, late = Client(), SlowClient()
    _room, channels, asker = attached(a)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(a.asked.wait(), 5)
    # `late` attaches while the request waits: its copy is on its way, slowly.
    going_live = asyncio.ensure_future(channels.begin_attach(SID, late.connection).go_live())
    await asyncio.wait_for(late.sending.wait(), 5)
    await a.answer(SELECTED)
    assert await asyncio.wait_for(asking, 5) is PermissionOption.ALLOW_ONCE
    late.gate.set()  # the copy reaches `late` after the request was decided
    await asyncio.wait_for(going_live, 5)
    await settle()
    # It must be withdrawn like every other copy, or `late`'s dialog waits forever.
    assert late.withdrawn() == [late.request()["id"]]


async def test_a_client_that_closed_the_session_cannot_answer_for_it() -> None:
    a, b = Client(), Client()
    room, _channels, asker = attached(a, b)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(asyncio.gather(a.asked.wait(), b.asked.wait()), 5)
    room.detach(SID, a.connection)  # a's `session/close`: it left the session
    await a.answer(SELECTED)
    await settle()
    # Only attached connections decide; a's copy is withdrawn as it leaves.
    assert not asking.done()
    assert a.withdrawn() == [a.request()["id"]]
    await b.answer({"outcome": "denied"})
    assert await asyncio.wait_for(asking, 5) is PermissionOption.REJECT_ONCE


_ = Connection  # the clients' connections are the protocol core's own


class NarrowClient(Client):
    """Its transport cannot carry the permission request (over IAC_CODE_HTTP_MAX_EVENT_BYTES):
    the send fails at once with a JSON-RPC error, as the SSE outbox and WebSocket do."""

    async def _send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/request_permission":
            raise RpcError(-32603, "the message is over the limit")
        await super()._send(message)


async def test_a_request_no_client_can_be_sent_is_unavailable_not_a_crash() -> None:
    _, _, asker = attached(NarrowClient())
    with pytest.raises(PermissionUnavailable):
        await asyncio.wait_for(asker.ask(SID, REQUEST), 5)


async def test_a_client_that_cannot_take_the_request_leaves_it_to_the_others() -> None:
    narrow, b = NarrowClient(), Client()
    _room, channels, asker = attached(narrow, b)
    asking = asyncio.ensure_future(asker.ask(SID, REQUEST))
    await asyncio.wait_for(b.asked.wait(), 5)
    late = NarrowClient()  # one attaching meanwhile cannot take its copy either
    await asyncio.wait_for(channels.begin_attach(SID, late.connection).go_live(), 5)
    await settle()
    assert not asking.done()
    await b.answer(SELECTED)
    assert await asyncio.wait_for(asking, 5) is PermissionOption.ALLOW_ONCE
