"""`elicitation/create` with real protocol connections: sent only to the clients that
advertised the mode, the first answer wins and the other copies are withdrawn with
`$/cancel_request`, a client that goes live meanwhile gets its copy, and every request is
what the newest schema file says."""

import asyncio
import json
from typing import Any

import pytest

from adapters.acp_v1.elicitation import (
    AcpElicitor,
    advertised,
    elicitation_params,
    form_schema,
    read_answer,
)
from adapters.acp_v1.rendering import V1Rendering
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection
from application.attachments.room import Attachments
from application.ports.elicitation import (
    Elicitation,
    ElicitationAnswer,
    ElicitationMode,
    ElicitationUnavailable,
)
from domain.questions import ElicitationAction, Question
from tests.support.schema_file import problems_with
from tests.unit.adapters.acp_v1.test_permission_fan_out import Idle, settle

SID = "s1"
FORM = {"elicitation": {"form": {}}}
BOTH = {"elicitation": {"form": {}, "url": {}}}
QUESTION = Elicitation(
    message="Which branch?",
    schema=Question(text="Which branch?", choices=("main", "dev")).form(),
    tool_call_id="call-1",
)
SIGN_IN = Elicitation(
    message="Sign in to GitHub", url="https://example.com/login", elicitation_id="el-1"
)


class Client:
    def __init__(self, capabilities: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        self.asked = asyncio.Event()
        self.connection = Connection(self._send, Idle())
        self.connection.client_capabilities = capabilities

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message.get("method") == "elicitation/create":
            self.asked.set()

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == "elicitation/create"]

    def withdrawn(self) -> list[Any]:
        return [
            m["params"]["requestId"] for m in self.sent if m.get("method") == "$/cancel_request"
        ]

    async def answer(self, result: Any) -> None:
        reply = {"jsonrpc": "2.0", "id": self.requests()[0]["id"], "result": result}
        await self.connection.receive(json.dumps(reply))


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing here closes a session")


def setup(*clients: Client) -> tuple[Attachments, SessionChannels, AcpElicitor]:
    room = Attachments(close=_never_closed, busy=lambda _: True)
    for client in clients:
        room.attach(SID, client.connection)
    return room, SessionChannels(room, V1Rendering()), AcpElicitor(room)


def test_a_mode_is_advertised_by_an_object_only() -> None:
    assert advertised(FORM, ElicitationMode.FORM)
    assert not advertised(FORM, ElicitationMode.URL)
    assert advertised(BOTH, ElicitationMode.URL)
    for capabilities in (None, {}, {"elicitation": None}, {"elicitation": {"form": None}}):
        assert not advertised(capabilities, ElicitationMode.FORM)


def test_requests_are_what_the_schema_file_says() -> None:
    form = elicitation_params(SID, QUESTION)
    assert form == {
        "sessionId": SID,
        "message": "Which branch?",
        "mode": "form",
        "toolCallId": "call-1",
        "requestedSchema": QUESTION.schema,
    }
    url = elicitation_params(SID, SIGN_IN)
    assert url == {
        "sessionId": SID,
        "message": "Sign in to GitHub",
        "mode": "url",
        "url": "https://example.com/login",
        "elicitationId": "el-1",
    }
    for params in (form, url):
        assert problems_with("CreateElicitationRequest", params) == []


def test_a_servers_schema_keeps_only_what_a_form_may_say() -> None:
    theirs = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Login",
        "properties": {"user": {"type": "string"}},
        "required": ["user", 3],
    }
    assert form_schema(theirs) == {
        "type": "object",
        "title": "Login",
        "properties": {"user": {"type": "string"}},
        "required": ["user"],
    }


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"action": "accept", "content": {"a": "x", "n": 2, "tags": ["p"], "bad": {"o": 1}}},
            ElicitationAnswer(
                action=ElicitationAction.ACCEPT, content={"a": "x", "n": 2, "tags": ["p"]}
            ),
        ),
        ({"action": "accept"}, ElicitationAnswer(action=ElicitationAction.ACCEPT)),
        ({"action": "decline"}, ElicitationAnswer(action=ElicitationAction.DECLINE)),
        ({"action": "cancel"}, ElicitationAnswer(action=ElicitationAction.CANCEL)),
        ({"action": "_snooze"}, ElicitationAnswer(action=ElicitationAction.CANCEL)),
        (None, ElicitationAnswer(action=ElicitationAction.CANCEL)),
    ],
)
def test_answers_are_read_leniently(result: Any, expected: ElicitationAnswer) -> None:
    assert read_answer(result) == expected


async def test_only_capable_clients_are_asked_and_the_first_answer_withdraws_the_rest() -> None:
    a, b, blind = Client(FORM), Client(BOTH), Client({})
    _room, channels, elicitor = setup(a, b, blind)
    asking = asyncio.ensure_future(elicitor.ask(SID, QUESTION))
    await asyncio.wait_for(asyncio.gather(a.asked.wait(), b.asked.wait()), 5)
    assert blind.requests() == []
    assert channels.turn_state(SID) == {"state": "running"}  # not a permission request
    await b.answer({"action": "accept", "content": {"answer": "dev"}})
    answer = await asyncio.wait_for(asking, 5)
    assert answer == ElicitationAnswer(action=ElicitationAction.ACCEPT, content={"answer": "dev"})
    assert a.withdrawn() == [a.requests()[0]["id"]]
    assert b.withdrawn() == []


async def test_url_mode_goes_only_to_clients_that_advertised_it_and_completes() -> None:
    a, b = Client(FORM), Client(BOTH)
    _, _, elicitor = setup(a, b)
    asking = asyncio.ensure_future(elicitor.ask(SID, SIGN_IN))
    await asyncio.wait_for(b.asked.wait(), 5)
    await settle()
    assert a.requests() == []
    await b.answer({"action": "accept"})
    assert (await asyncio.wait_for(asking, 5)).action is ElicitationAction.ACCEPT
    await elicitor.complete(SID, "el-1")
    completes = [m for m in b.sent if m.get("method") == "elicitation/complete"]
    assert completes == [
        {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "el-1"}}
    ]
    assert problems_with("CompleteElicitationNotification", completes[0]["params"]) == []
    assert not any(m.get("method") == "elicitation/complete" for m in a.sent)


async def test_without_a_capable_client_it_is_unavailable_at_once() -> None:
    a = Client(FORM)
    _, _, elicitor = setup(a)
    with pytest.raises(ElicitationUnavailable, match="url elicitation"):
        await elicitor.ask(SID, SIGN_IN)
    assert a.sent == []
    assert elicitor.can_ask(SID, ElicitationMode.FORM)
    assert not elicitor.can_ask(SID, ElicitationMode.URL)


async def test_a_client_going_live_meanwhile_gets_its_copy_and_cancel_withdraws_all() -> None:
    a = Client(FORM)
    room, channels, elicitor = setup(a)
    asking = asyncio.ensure_future(elicitor.ask(SID, QUESTION))
    await asyncio.wait_for(a.asked.wait(), 5)
    late = Client(FORM)
    attaching = channels.begin_attach(SID, late.connection)
    await attaching.go_live()
    await asyncio.wait_for(late.asked.wait(), 5)
    asking.cancel()  # the turn was cancelled
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert a.withdrawn() == [a.requests()[0]["id"]]
    assert late.withdrawn() == [late.requests()[0]["id"]]
    assert room.is_attached(SID, late.connection)
