"""Queueing (application.runtime.queueing, ActiveSession's hand-over): prompts
that wait behind a running turn run in order, each once, and every change is shown."""

import asyncio

import pytest

from application.commands.queue import queue_report
from application.errors import SessionBusy
from application.runtime.queueing import QueuePrompts, preview
from application.runtime.turn_control import TurnControl
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.events import PromptQueueChanged
from domain.stop_reason import StopReason
from tests.unit.application.test_prompt import hang, open_session, reply
from tests.unit.application.world import World


def queue_of(world: World, max_waiting: int = 8) -> QueuePrompts:
    return QueuePrompts(registry=world.registry, sink=world.sink, max_waiting=max_waiting)


def content(text: str) -> tuple[TextBlock, ...]:
    return (TextBlock(text=text),)


async def queued_prompt(world: World, queue: QueuePrompts, sid: str, text: str) -> StopReason:
    """As the protocol runs one: queue it, wait its turn, run it, release the session."""
    control = TurnControl()
    entry = await queue.enqueue(sid, content(text), control, queued_by="editor")
    if not await queue.wait_turn(sid, entry):
        return StopReason.CANCELLED
    try:
        request = PromptRequest(session_id=sid, content=content(text), control=control)
        return (await world.prompt().execute(request)).stop_reason
    finally:
        queue.release(sid, control)


def shown(world: World) -> list[list[str]]:
    return [[e.preview for e in q.entries] for q in world.sink.of_type(PromptQueueChanged)]


async def test_prompts_queued_behind_a_turn_run_in_order_each_after_its_own(
    world: World,
) -> None:
    release = asyncio.Event()

    async def held(_: object) -> object:
        await release.wait()
        for event in reply("first done"):
            yield event

    world.llm.scripts = [held, reply("a done"), reply("b done"), reply("c done")]
    sid = await open_session(world)
    queue = queue_of(world)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("first")))
    )
    await world.llm.started.wait()
    waiting = [asyncio.create_task(queued_prompt(world, queue, sid, t)) for t in "abc"]
    while len(queue.entries(sid)) < 3:
        await asyncio.sleep(0)
    # Nobody overtakes the queue: a plain prompt is refused busy, even between turns.
    with pytest.raises(SessionBusy):
        await world.prompt().execute(PromptRequest(session_id=sid, content=content("x")))
    release.set()

    assert (await running).stop_reason is StopReason.END_TURN
    assert [await w for w in waiting] == [StopReason.END_TURN] * 3
    said = [m.visible_text() for m in world.uow.sessions.messages[sid]]
    assert said == ["first", "first done", "a", "a done", "b", "b done", "c", "c done"]
    assert shown(world) == [["a"], ["a", "b"], ["a", "b", "c"], ["b", "c"], ["c"], []]
    assert world.registry.require(sid).turn is None


async def test_past_its_bound_the_queue_answers_busy_with_its_length(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    queue = queue_of(world, max_waiting=1)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("q")))
    )
    await world.llm.started.wait()
    await queue.enqueue(sid, content("one"), TurnControl(), queued_by="editor")

    with pytest.raises(SessionBusy) as full:
        await queue.enqueue(sid, content("two"), TurnControl(), queued_by="editor")

    assert full.value.details == {"sessionId": sid, "queueLength": 1, "queueMax": 1}
    world.cancel().execute(sid)
    await running


async def test_a_withdrawn_prompt_never_runs_and_the_next_moves_up(world: World) -> None:
    release = asyncio.Event()

    async def held(_: object) -> object:
        await release.wait()
        for event in reply("first done"):
            yield event

    world.llm.scripts = [held, reply("b done")]
    sid = await open_session(world)
    queue = queue_of(world)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("first")))
    )
    await world.llm.started.wait()
    control = TurnControl()
    entry = await queue.enqueue(sid, content("a"), control, queued_by="editor")
    withdrawn = asyncio.create_task(queue.wait_turn(sid, entry))
    b = asyncio.create_task(queued_prompt(world, queue, sid, "b"))
    while len(queue.entries(sid)) < 2:
        await asyncio.sleep(0)
    control.cancelled.set()  # as `$/cancel_request` does

    assert await withdrawn is False
    release.set()
    await running
    assert await b is StopReason.END_TURN
    said = [m.visible_text() for m in world.uow.sessions.messages[sid]]
    assert said == ["first", "first done", "b", "b done"]


async def test_a_queued_prompt_refused_as_it_comes_up_passes_the_session_on(
    world: World,
) -> None:
    """Its turn was reserved but never began (the key went away): the next still runs."""
    release = asyncio.Event()

    async def held(_: object) -> object:
        await release.wait()
        for event in reply("first done"):
            yield event

    world.llm.scripts = [held]
    sid = await open_session(world)
    queue = queue_of(world)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("first")))
    )
    await world.llm.started.wait()
    refused = asyncio.create_task(queued_prompt(world, queue, sid, "a"))
    after = asyncio.create_task(queued_prompt(world, queue, sid, "/help"))  # needs no key
    while len(queue.entries(sid)) < 2:
        await asyncio.sleep(0)
    world.llm._credentials = False
    release.set()

    with pytest.raises(Exception, match="No API key"):
        await refused
    assert await after is StopReason.END_TURN
    await running
    assert world.registry.require(sid).turn is None


async def test_closing_the_session_drops_what_waits(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    queue = queue_of(world)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("q")))
    )
    await world.llm.started.wait()
    waiting = asyncio.create_task(queued_prompt(world, queue, sid, "a"))
    while not queue.entries(sid):
        await asyncio.sleep(0)

    await world.close().execute(sid)

    assert await waiting is StopReason.CANCELLED
    assert (await running).stop_reason is StopReason.CANCELLED


async def test_queue_command_shows_and_clears(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    queue = queue_of(world)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=content("q")))
    )
    await world.llm.started.wait()
    assert await queue_report(queue, sid, "") == "No prompts are queued."
    first = TurnControl()
    entry = await queue.enqueue(sid, content("add a test for the parser please"), first, "zed")
    waiting = asyncio.create_task(queue.wait_turn(sid, entry))

    listing = await queue_report(queue, sid, "")
    assert listing == (
        "1 queued behind the running turn, oldest first:\n"
        f"1. “add a test for the parser please” (from zed, id {entry.id})"
    )
    assert await queue_report(queue, sid, "clear") == "Dropped 1 queued prompt."
    assert await waiting is False
    assert (await queue_report(queue, sid, "later")).startswith("Usage:")
    world.cancel().execute(sid)
    await running


def test_a_preview_is_the_first_words() -> None:
    assert preview(content("one two three")) == "one two three"
    assert preview(content(" ".join(str(n) for n in range(20)))) == "0 1 2 3 4 5 6 7 …"
    assert len(preview(content("x" * 500))) == 80
