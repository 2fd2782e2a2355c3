"""Steering (application.turn.steering, ModelTurn's safe points): a message sent while
the agent works reaches the model's next request, or begins the next turn, and is answered
truthfully either way."""

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from application.errors import AuthRequired
from application.history.session_log import SessionLog
from application.ports.llm import ModelRequest
from application.ports.tools import ToolResult
from application.turn.prompt import PromptRequest
from application.turn.steering import (
    CANCELLED_BEFORE_DELIVERY,
    IDLE_REFUSED,
    StartTurn,
    SteerRequest,
    SteerSession,
)
from domain.content import TextBlock, ToolResultBlock
from domain.events import SteeringWaiting, UserContentReplayed
from domain.message import Role
from domain.steering import IdleBehavior, SteerOutcome, SteerResult
from domain.stop_reason import StopReason
from tests.support.patience import PATIENCE
from tests.unit.application.test_prompt import ask, open_session, reply, tool_reply
from tests.unit.application.world import World

Started = list["asyncio.Future[object]"]


def steer(sid: str, text: str, idle: IdleBehavior = IdleBehavior.START_NEW_TURN) -> SteerRequest:
    return SteerRequest(session_id=sid, content=(TextBlock(text=text),), idle=idle)


def starter(world: World, started: Started) -> StartTurn:
    def start(request: PromptRequest) -> "asyncio.Future[object]":
        turn: asyncio.Future[object] = asyncio.ensure_future(world.prompt().execute(request))
        started.append(turn)
        return turn

    return start


async def send(world: World, request: SteerRequest, started: Started) -> SteerResult:
    return await SteerSession(registry=world.registry, sink=world.sink).execute(
        request, starter(world, started)
    )


def held(release: asyncio.Event, text: str = "Working") -> object:
    """A reply that streams its first words, then waits for `release`."""

    async def script(_: ModelRequest) -> AsyncIterator[object]:
        for event in reply(text)[:1]:
            yield event
        await release.wait()
        for event in reply(text)[1:]:
            yield event

    return script


def texts(request: ModelRequest) -> list[str]:
    return [b.text for m in request.messages for b in m.content if isinstance(b, TextBlock)]


async def test_a_steer_during_a_streaming_reply_reaches_the_next_request(world: World) -> None:
    release = asyncio.Event()
    world.llm.scripts = [held(release), reply("Also done")]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid, "do the work")))
    await world.llm.started.wait()
    started: Started = []
    answer = asyncio.create_task(send(world, steer(sid, "also add tests"), started))
    await asyncio.sleep(0)  # the steer is offered before the reply finishes
    release.set()

    result = await answer
    assert (await running).stop_reason is StopReason.END_TURN
    assert result.outcome is SteerOutcome.INJECTED and not started
    stored = world.uow.sessions.messages[sid]
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert stored[2].id == result.message_id and stored[2].visible_text() == "also add tests"
    assert texts(world.llm.requests[1])[-1] == "also add tests"  # after the finished reply
    shown = world.sink.of_type(UserContentReplayed)
    assert shown == [UserContentReplayed(message_id=stored[2].id, block=stored[2].content[0])]
    # Everyone saw it wait, then go.
    assert world.sink.of_type(SteeringWaiting) == [
        SteeringWaiting(waiting=1),
        SteeringWaiting(waiting=0),
    ]


async def test_a_steer_during_a_tool_call_follows_its_result(world: World) -> None:
    running_tool, finish_tool = asyncio.Event(), asyncio.Event()

    async def read(_: Mapping[str, object]) -> ToolResult:
        running_tool.set()
        await finish_tool.wait()
        return ToolResult(text="contents")

    world.tools.tools = {"read_file": read}
    world.llm.scripts = [tool_reply(1), reply("Read it, and noted")]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid, "read a")))
    await running_tool.wait()
    answer = asyncio.create_task(send(world, steer(sid, "then summarise"), []))
    await asyncio.sleep(0)
    finish_tool.set()

    assert (await answer).outcome is SteerOutcome.INJECTED
    await running
    stored = world.uow.sessions.messages[sid]
    # The tool's use and result stay a pair: the message comes after the result.
    assert [m.role for m in stored] == [
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.USER,
        Role.ASSISTANT,
    ]
    assert isinstance(stored[2].content[0], ToolResultBlock)
    assert stored[3].visible_text() == "then summarise"
    last = world.llm.requests[1].messages[-1]  # the provider's view: one user message
    assert isinstance(last.content[0], ToolResultBlock)
    assert last.content[-1] == TextBlock(text="then summarise")


async def test_on_an_idle_session_a_steer_starts_a_turn(world: World) -> None:
    world.llm.scripts = [reply("Hello")]
    sid = await open_session(world)
    started: Started = []

    result = await send(world, steer(sid, "hi"), started)

    assert result == SteerResult(outcome=SteerOutcome.STARTED_NEW_TURN)
    assert len(started) == 1
    assert (await started[0]).stop_reason is StopReason.END_TURN
    assert [m.visible_text() for m in world.uow.sessions.messages[sid]] == ["hi", "Hello"]


async def test_on_an_idle_session_fail_refuses(world: World) -> None:
    sid = await open_session(world)
    started: Started = []

    result = await send(world, steer(sid, "hi", IdleBehavior.FAIL), started)

    assert result == SteerResult(outcome=SteerOutcome.FAILED, reason=IDLE_REFUSED)
    assert not started and world.uow.sessions.messages[sid] == []


async def test_a_steer_after_the_turn_stopped_taking_them_starts_the_next(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn decided to stop (its inbox closed) but has not ended (it is storing its
    record): the message waits for it to end, then begins the next turn; nothing is lost."""
    storing, release = asyncio.Event(), asyncio.Event()
    record = SessionLog.record

    async def held_record(self: SessionLog, *args: Any) -> None:
        storing.set()
        await release.wait()
        await record(self, *args)

    monkeypatch.setattr(SessionLog, "record", held_record)
    world.llm.scripts = [reply("first"), reply("second")]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid, "one")))
    await asyncio.wait_for(storing.wait(), PATIENCE)
    control = world.registry.require(sid).turn
    assert control is not None and control.steers.closed
    started: Started = []
    answer = asyncio.create_task(send(world, steer(sid, "two"), started))
    await asyncio.sleep(0)
    release.set()

    assert (await answer).outcome is SteerOutcome.STARTED_NEW_TURN
    await running
    await started[0]
    shown = [m.visible_text() for m in world.uow.sessions.messages[sid]]
    assert shown == ["one", "first", "two", "second"]


async def test_a_cancelled_turn_fails_what_waited_for_it(world: World) -> None:
    release = asyncio.Event()
    world.llm.scripts = [held(release)]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    await world.llm.started.wait()
    answer = asyncio.create_task(send(world, steer(sid, "also this"), []))
    await asyncio.sleep(0)
    world.cancel().execute(sid)

    assert await answer == SteerResult(
        outcome=SteerOutcome.FAILED, reason=CANCELLED_BEFORE_DELIVERY
    )
    await running
    assert "also this" not in [m.visible_text() for m in world.uow.sessions.messages[sid]]


async def test_a_command_turn_hands_the_message_to_the_next_turn(world: World) -> None:
    """A built-in command never asks the model, so it has no safe point: the message
    begins the turn after it."""
    world.llm.scripts = [reply("ok")]
    sid = await open_session(world)
    active = world.registry.require(sid)
    gate = asyncio.Event()
    original = world.sink.emit

    async def slow_emit(session_id: object, event: object) -> None:
        await gate.wait()
        await original(session_id, event)

    world.sink.emit = slow_emit
    command = asyncio.create_task(world.prompt().execute(ask(sid, "/help")))
    while active.turn is None:
        await asyncio.sleep(0)
    answer = asyncio.create_task(send(world, steer(sid, "after help"), started := []))
    await asyncio.sleep(0)
    gate.set()
    await command

    assert (await answer).outcome is SteerOutcome.STARTED_NEW_TURN
    await started[0]
    assert texts(world.llm.requests[0])[-1] == "after help"


async def test_a_refused_turn_is_an_error_not_an_outcome(world: World) -> None:
    sid = await open_session(world)
    world.llm._credentials = False  # the key went away: the turn is refused before it began

    with pytest.raises(AuthRequired):
        await send(world, steer(sid, "hi"), [])
