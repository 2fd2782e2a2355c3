"""Leases taken and sessions stored by another process, for the turn lease tests."""

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta

from application.ports.llm import ModelRequest, TextChunk
from domain.content import TextBlock
from domain.ids import SessionId
from domain.message import Message
from domain.spawn import Spawn
from tests.factories import MessageFactory, SessionFactory
from tests.fakes.leases import InMemoryTurnLeases
from tests.unit.application.world import World

ELSEWHERE = "there"


async def eventually(condition: Callable[[], bool], bound: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0.005)


def leases_of(world: World) -> InMemoryTurnLeases:
    assert world.leases is not None
    return world.leases


async def taken_elsewhere(world: World, sid: str) -> None:
    now = world.lease_clock.now()
    assert await leases_of(world).acquire(
        SessionId(sid), ELSEWHERE, now, now + timedelta(seconds=30)
    )


async def partial_then_hang(_: ModelRequest) -> AsyncIterator:
    yield TextChunk(text="Partial ")
    await asyncio.Event().wait()
    yield TextChunk(text="never")


def stored_elsewhere(world: World, sid: str, *messages: Message) -> None:
    """Another process appends messages to the session and stores them (a new version)."""
    stored = world.uow.sessions.stored[SessionId(sid)]
    stored.messages.extend(messages)
    stored.version += 1


def said(text: str) -> Message:
    return MessageFactory(content=(TextBlock(text=text),))


def interrupted_session(cwd: str = "/p", spawn: Spawn | None = None):  # type: ignore[no-untyped-def]
    """A turn cut off by a crash while its tool ran: the tool use has no result."""
    session = SessionFactory(cwd=cwd, spawn=spawn)
    session.add_message(MessageFactory())
    session.add_message(MessageFactory(asking_tool=True))
    return session
