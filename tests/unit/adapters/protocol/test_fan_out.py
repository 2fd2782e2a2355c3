"""Fan-out of a session's updates to every attached connection, the update log seam, the
private replay of an attaching client, and the turn state on its first update."""

import asyncio
import contextlib
from typing import Any

from adapters.acp_v1.questions import V1_QUESTIONS
from adapters.acp_v1.rendering import V1Rendering
from adapters.protocol.channels import SessionChannels, UpdateLog
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.question_wire import QuestionWire
from application.attachments.room import Attachments
from application.ports.permissions import PermissionRequest
from application.ports.questions import PermissionQuestion
from domain.events import TextDelta
from domain.ids import SessionId, ToolCallId
from domain.tool_call import ToolKind

SID = SessionId("s1")


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
        self.connection = Connection(self._send, Idle())

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def texts(self) -> list[str]:
        return [
            m["params"]["update"]["content"]["text"]
            for m in self.sent
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]

    def first_turn_state(self) -> Any:
        return self.sent[0]["params"]["_meta"]["iac_code"]["turn"]


class Numbering:
    """An UpdateLog that numbers updates, as the journal does."""

    def __init__(self) -> None:
        self.recorded: list[tuple[str, dict[str, Any]]] = []

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        self.recorded.append((session_id, params))
        return {**params, "_meta": {"seq": len(self.recorded)}}


def text(value: str) -> TextDelta:
    return TextDelta(message_id="m1", text=value)


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing here closes a session")


def channels_over(
    *, busy: bool = False, update_log: UpdateLog | None = None
) -> tuple[Attachments, SessionChannels]:
    """The room (who is attached) and the channels delivering to its clients."""
    room = Attachments(close=_never_closed, busy=lambda _: busy)
    return room, SessionChannels(room, V1Rendering(), update_log=update_log)


async def test_every_attached_client_gets_each_update_once_in_order() -> None:
    room, channels = channels_over(busy=True)
    a, b = Client(), Client()
    room.attach(SID, a.connection)
    room.attach(SID, b.connection)
    for word in ("one", "two", "three"):
        await channels.emit(SID, text(word))
    assert a.texts() == b.texts() == ["one", "two", "three"]
    assert a.first_turn_state() == b.first_turn_state() == {"state": "running"}
    assert "_meta" not in a.sent[1]["params"]  # only the first carries the state


async def test_the_update_log_sees_each_live_update_once_and_its_params_are_sent() -> None:
    log = Numbering()
    room, channels = channels_over(update_log=log)
    a, b = Client(), Client()
    room.attach(SID, a.connection)
    room.attach(SID, b.connection)
    await channels.emit(SID, text("one"))
    await channels.emit(SID, text("two"))
    assert [p["update"]["content"]["text"] for _, p in log.recorded] == ["one", "two"]
    assert [m["params"]["_meta"]["seq"] for m in a.sent] == [1, 2]
    assert [m["params"]["_meta"]["seq"] for m in b.sent] == [1, 2]
    # The turn state joins the log's _meta on the first update, for that client only.
    assert a.sent[0]["params"]["_meta"]["iac_code"]["turn"] == {"state": "idle"}
    assert "iac_code" not in log.recorded[0][1].get("_meta", {})


async def test_an_attaching_client_gets_its_replay_alone_then_what_it_missed_then_live() -> None:
    log = Numbering()
    room, channels = channels_over(update_log=log, busy=True)
    a, b = Client(), Client()
    room.attach(SID, a.connection)
    await channels.emit(SID, text("before"))
    attaching = channels.begin_attach(SID, b.connection)
    await attaching.emit(SID, text("history"))  # the replay: b only, not logged
    await channels.emit(SID, text("during"))  # live while b attaches: held for b
    assert b.texts() == ["history"]
    await attaching.go_live()
    await channels.emit(SID, text("after"))
    assert a.texts() == ["before", "during", "after"]
    assert b.texts() == ["history", "during", "after"]
    assert [p["update"]["content"]["text"] for _, p in log.recorded] == [
        "before",
        "during",
        "after",
    ]
    assert b.first_turn_state() == {"state": "running"}


async def test_an_attach_with_nothing_to_send_still_tells_the_turn_state() -> None:
    room, channels = channels_over(busy=True)
    # A permission request waits for an answer, nobody attached yet.
    request = PermissionRequest(
        tool_call_id=ToolCallId("call-1"),
        tool_name="bash",
        title="Run ls",
        kind=ToolKind.EXECUTE,
        arguments={},
        locations=(),
        preview=(),
    )
    asking = asyncio.ensure_future(room.ask_permission(PermissionQuestion(SID, request)))
    await asyncio.sleep(0)
    b = Client()
    attaching = channels.begin_attach(SID, b.connection)
    await attaching.go_live()
    assert b.sent[0]["params"]["update"] == {"sessionUpdate": "session_info_update"}
    assert b.first_turn_state() == {"state": "awaiting_permission", "toolCallId": "call-1"}
    asking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asking


async def test_a_failed_attach_leaves_a_new_client_detached() -> None:
    room, channels = channels_over()
    a, b = Client(), Client()
    room.attach(SID, a.connection)
    attaching = channels.begin_attach(SID, b.connection)
    await attaching.abort()
    await channels.emit(SID, text("x"))
    assert room.peers_of(SID) == [a.connection]
    assert b.sent == []


async def test_a_slow_client_does_not_hold_the_others_back() -> None:
    """Sends go out concurrently: the fast client has the update while the slow one's
    transport still waits (its own patience bounds that wait)."""
    room, channels = channels_over()
    fast = Client()
    gate = asyncio.Event()
    slow_sent: list[dict[str, Any]] = []

    async def slow_send(message: dict[str, Any]) -> None:
        await gate.wait()
        slow_sent.append(message)

    slow = Connection(slow_send, Idle())
    room.attach(SID, slow)
    room.attach(SID, fast.connection)
    emitting = asyncio.ensure_future(channels.emit(SID, text("one")))
    for _ in range(100):  # a few loop passes: the fast send needs no more
        if fast.sent:
            break
        await asyncio.sleep(0)
    assert fast.texts() == ["one"] and slow_sent == [] and not emitting.done()
    gate.set()
    await emitting
    assert len(slow_sent) == 1


class Journaling:
    """An UpdateLog that numbers updates as the journal does (`_meta.iac_code.seq`) and
    keeps them, so that a test can hand an attaching client what it missed."""

    def __init__(self) -> None:
        self.kept: list[dict[str, Any]] = []

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        numbered = {**params, "_meta": {"iac_code": {"seq": len(self.kept) + 1}}}
        self.kept.append(numbered)
        return numbered


async def test_missed_updates_then_held_live_ones_reach_an_attaching_client_once() -> None:
    log = Journaling()
    room, channels = channels_over(update_log=log)
    a, b = Client(), Client()
    room.attach(SID, a.connection)
    await channels.emit(SID, text("one "))
    await channels.emit(SID, text("two "))
    attaching = channels.begin_attach(SID, b.connection)
    await channels.emit(SID, text("three "))  # held for b: it is also among the missed
    await attaching.send_missed(log.kept[:3])  # b's cursor was 0: all three
    await attaching.go_live()
    await channels.emit(SID, text("four"))
    assert a.texts() == b.texts() == ["one ", "two ", "three ", "four"]
    numbers = [m["params"]["_meta"]["iac_code"]["seq"] for m in b.sent]
    assert numbers == [1, 2, 3, 4]
