"""A permission request put to every client attached to a session, with fake clients: a
copy each, the first answer wins, the others are withdrawn, clients leaving or failing."""

import asyncio
from typing import Any

import pytest

from application.attachments.room import Attachments
from application.attachments.turn_state import TurnPhase, TurnState
from application.ports.permissions import PermissionRequest, PermissionUnavailable
from application.ports.questions import PermissionAnswer, PermissionQuestion, Question
from domain.ids import ToolCallId
from domain.permission import PermissionOption
from domain.tool_call import ToolKind
from tests.fakes.clients import FakeCall, FakeClient, FakeSessions

SID = "s1"
QUESTION = PermissionQuestion(
    SID,
    PermissionRequest(
        tool_call_id=ToolCallId("call-1"),
        tool_name="bash",
        title="Run ls",
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        locations=(),
        preview=(),
    ),
)
# Each client's answer differs, so that which one won shows.
A_S = PermissionAnswer(PermissionOption.ALLOW_ONCE)
B_S = PermissionAnswer(PermissionOption.REJECT_ONCE)
LATE_S = PermissionAnswer(PermissionOption.ALLOW_ALWAYS)
YES = PermissionAnswer(PermissionOption.ALLOW_ONCE)


@pytest.fixture
def room() -> Attachments:
    sessions = FakeSessions(running={SID})
    return Attachments(close=sessions.close, busy=sessions.busy)


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def attached(room: Attachments, *names: str) -> list[FakeClient]:
    clients = [FakeClient(name) for name in names]
    for client in clients:
        room.attach(SID, client)
    return clients


async def ask(room: Attachments) -> "asyncio.Task[Any]":
    asking = asyncio.ensure_future(room.ask_permission(QUESTION))
    await settle()
    return asking


async def test_every_live_client_gets_a_copy_and_the_first_answer_wins(room: Attachments) -> None:
    a, b = attached(room, "a", "b")
    asking = await ask(room)
    assert [c.question for c in (*a.calls, *b.calls)] == [QUESTION] * 2
    assert room.turn_state(SID) == TurnState(TurnPhase.AWAITING_PERMISSION, "call-1")
    b.last_call().reply(B_S)
    assert await asyncio.wait_for(asking, 5) == B_S
    assert a.last_call().withdrawn and not b.last_call().withdrawn
    assert room.turn_state(SID) == TurnState(TurnPhase.RUNNING)
    assert not room.awaiting_permission(SID)


async def test_a_client_leaving_mid_ask_is_withdrawn_and_the_others_decide(
    room: Attachments,
) -> None:
    a, b = attached(room, "a", "b")
    asking = await ask(room)
    room.detach(SID, a)  # its session/close
    await settle()
    assert a.last_call().withdrawn and not asking.done()
    b.last_call().reply(B_S)
    assert await asyncio.wait_for(asking, 5) == B_S


async def test_a_client_gone_mid_ask_leaves_the_question_to_the_next_one(
    room: Attachments,
) -> None:
    (a,) = attached(room, "a")
    asking = await ask(room)
    a.last_call().lose()  # its connection dropped
    await settle()
    assert not asking.done()  # not unavailable: someone may still come
    late = FakeClient("late")
    room.attach(SID, late, live=False)
    assert late.calls == []  # its replay first
    await room.went_live(SID, late)
    late.last_call().reply(LATE_S)
    assert await asyncio.wait_for(asking, 5) == LATE_S


async def test_with_nobody_attached_the_question_waits_and_says_so(room: Attachments) -> None:
    asking = await ask(room)
    assert not asking.done() and room.awaiting_permission(SID)
    late = FakeClient("late")
    room.attach(SID, late, live=False)
    await room.went_live(SID, late)
    await room.went_live(SID, late)  # told twice: still one copy
    assert len(late.calls) == 1
    late.last_call().reply(YES)
    assert await asyncio.wait_for(asking, 5) == YES


async def test_an_error_from_one_client_leaves_the_others_to_answer(room: Attachments) -> None:
    a, b = attached(room, "a", "b")
    asking = await ask(room)
    a.last_call().fail("no dialog here")
    await settle()
    assert not asking.done()
    b.last_call().reply(B_S)
    assert await asyncio.wait_for(asking, 5) == B_S


async def test_with_none_left_after_an_error_the_question_is_unavailable(
    room: Attachments,
) -> None:
    (a,) = attached(room, "a")
    asking = await ask(room)
    a.last_call().fail("no dialog here")
    with pytest.raises(PermissionUnavailable, match="no dialog here"):
        await asyncio.wait_for(asking, 5)
    assert room.turn_state(SID) == TurnState(TurnPhase.RUNNING)


async def test_a_question_no_client_can_be_sent_is_unavailable(room: Attachments) -> None:
    narrow, gone = attached(room, "narrow", "gone")
    narrow.refuse = "the message is over the limit"
    gone.gone = True
    with pytest.raises(PermissionUnavailable, match="over the limit"):
        await asyncio.wait_for(room.ask_permission(QUESTION), 5)


async def test_a_question_given_up_withdraws_every_copy(room: Attachments) -> None:
    a, b = attached(room, "a", "b")
    asking = await ask(room)
    asking.cancel()  # the turn was cancelled, or the permission timeout passed
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert a.last_call().withdrawn and b.last_call().withdrawn
    assert not room.awaiting_permission(SID)


class SlowClient(FakeClient):
    """Its transport takes the request only once the test opens the gate."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.gate = asyncio.Event()

    async def show(self, question: Question) -> FakeCall:
        await self.gate.wait()
        return await super().show(question)


async def test_a_copy_still_on_its_way_when_another_answers_is_withdrawn(
    room: Attachments,
) -> None:
    (a,) = attached(room, "a")
    asking = await ask(room)
    slow = SlowClient("slow")
    room.attach(SID, slow, live=False)
    going_live = asyncio.ensure_future(room.went_live(SID, slow))
    await settle()
    a.last_call().reply(A_S)
    assert await asyncio.wait_for(asking, 5) == A_S
    slow.gate.set()  # its copy goes out after the question was decided
    await asyncio.wait_for(going_live, 5)
    assert slow.last_call().withdrawn  # or its dialog would wait forever
