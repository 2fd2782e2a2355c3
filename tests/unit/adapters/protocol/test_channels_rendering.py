"""The channels deliver what the face renders, never knowing its shape: each update rendered
once, shaped per client, sent under the face's method; the turn state rides on whatever a
client is sent first (the face's state-only update when nothing else is). Numbered updates
also go to the other replicas once the cluster has registered itself. No protocol version
here: a made-up one, as a second face would be."""

from typing import Any

from adapters.protocol.channels import SessionChannels
from adapters.protocol.rendering import UpdateRendering
from adapters.protocol.replicas import OneProcess
from application.attachments.room import Attachments
from domain.events import AgentEvent, ChildEvent, TextDelta
from domain.ids import MessageId, SessionId
from tests.fakes.clients import FakeClient

SID = SessionId("s1")


class Plain(UpdateRendering):
    """A made-up version: `x/said` with the text; a client that asks for `shout` gets it
    in capitals, one that asks for `mute` nothing."""

    method = "x/said"

    def notification(self, session_id: str, event: AgentEvent) -> dict[str, Any]:
        text = event.text if isinstance(event, TextDelta) else type(event).__name__
        return {"session": session_id, "text": text}

    def for_client(self, params: dict[str, Any], capabilities: Any) -> dict[str, Any] | None:
        wants = capabilities or {}
        if wants.get("mute"):
            return None
        return {**params, "text": params["text"].upper()} if wants.get("shout") else params

    def state_only(self, session_id: str) -> dict[str, Any]:
        return {"session": session_id, "nothing": True}


class Numbering:
    def __init__(self) -> None:
        self.count = 0

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        return {**params, "_meta": {"iac_code": {"seq": self.count}}}


class Forwarded(OneProcess):
    def __init__(self) -> None:
        super().__init__()
        self.forwarded: list[tuple[str, dict[str, Any]]] = []

    def forward(self, session_id: str, params: dict[str, Any]) -> None:
        self.forwarded.append((session_id, params))


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing here closes a session")


def text(value: str) -> TextDelta:
    return TextDelta(message_id=MessageId("m1"), text=value)


def channels(log: Numbering | None = None) -> tuple[Attachments, SessionChannels]:
    room = Attachments(close=_never_closed, busy=lambda _: False)
    return room, SessionChannels(room, Plain(), update_log=log)


async def test_each_client_gets_the_update_as_the_face_shapes_it_for_it() -> None:
    room, sink = channels()
    plain, loud, muted = (
        FakeClient("a"),
        FakeClient("b", {"shout": True}),
        FakeClient("c", {"mute": True}),
    )
    for client in (plain, loud, muted):
        room.attach(SID, client)
    await sink.emit(SID, text("hi"))
    turn = {"iac_code": {"turn": {"state": "idle"}}}
    assert plain.notified == [("x/said", {"session": SID, "text": "hi", "_meta": turn})]
    assert loud.notified == [("x/said", {"session": SID, "text": "HI", "_meta": turn})]
    assert muted.notified == []


async def test_a_client_sent_nothing_while_attaching_gets_the_state_only_update() -> None:
    _, sink = channels()
    client = FakeClient("a")
    attaching = sink.begin_attach(SID, client)
    await attaching.go_live()
    turn = {"iac_code": {"turn": {"state": "idle"}}}
    assert client.notified == [("x/said", {"session": SID, "nothing": True, "_meta": turn})]


async def test_numbered_updates_go_to_the_replicas_registered_and_a_childs_do_not() -> None:
    log = Numbering()
    room, sink = channels(log)
    room.attach(SID, FakeClient("a"))
    await sink.emit(SID, text("before"))  # no cluster registered yet: nothing forwarded
    replicas = Forwarded()
    sink.replicate_through(replicas)
    await sink.emit(SID, text("after"))
    await sink.emit(SID, ChildEvent(child_id=SessionId("c1"), event=text("child's own")))
    assert replicas.forwarded == [
        (SID, {"session": SID, "text": "after", "_meta": {"iac_code": {"seq": 2}}})
    ]
