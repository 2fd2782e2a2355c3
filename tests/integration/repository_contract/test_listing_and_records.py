"""One contract, three implementations: listing, turn records, the editor's world, typed words,
the client's system prompt and rewinds are stored alike."""

from datetime import timedelta

import pytest

from application.ports.session_store import TurnRecord
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.content import TextBlock
from domain.ids import SessionId
from domain.stop_reason import StopReason
from domain.usage import Usage
from tests.factories import T0, MessageFactory, SessionFactory
from tests.integration.repository_contract.support import (
    UowFactory,
    append,
    finished_turn,
    fork_of,
    load,
    store,
    texts,
)

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]


async def test_list_orders_by_update_then_id_and_pages_by_key(uow: UowFactory) -> None:
    same_time = [SessionFactory(id=SessionId(f"s{i}"), cwd="/p") for i in range(3)]
    for session in same_time:
        await store(uow, session)
    other = await store(uow, SessionFactory(cwd="/q"))
    newer = await store(uow, SessionFactory(id=SessionId("s9"), cwd="/p"))
    await append(uow, newer, "bump")
    async with uow() as u:
        page = await u.listing.list_page(cwd="/p", after=None, limit=10)
        assert [s.session_id for s in page] == ["s9", "s2", "s1", "s0"]
        assert page[0].message_count == 1
        rest = await u.listing.list_page(cwd="/p", after=(page[1].updated_at, "s2"), limit=10)
        assert [s.session_id for s in rest] == ["s1", "s0"]
        everything = await u.listing.list_page(cwd=None, after=None, limit=10)
        assert other.id in [s.session_id for s in everything]


async def test_turn_records_come_back_oldest_first_with_usage_and_cost(uow: UowFactory) -> None:
    session = await store(uow, SessionFactory())
    other = await store(uow, SessionFactory())
    small = Usage(input_tokens=7, output_tokens=3)
    later = finished_turn(T0 + timedelta(minutes=5), small, None, StopReason.CANCELLED)
    earlier = finished_turn(
        T0,
        Usage(input_tokens=100, output_tokens=20, cache_read_tokens=50, cache_write_tokens=10),
        0.00123,
        StopReason.END_TURN,
    )
    async with uow() as u:
        await u.activity.record_turn(session.id, later, "the model failed")
        await u.activity.record_turn(session.id, earlier, None)
        await u.activity.record_turn(other.id, earlier, None)
        await u.commit()
    earlier.add_usage(Usage(input_tokens=999), 1.0)  # what was stored stays as it was

    fork = await fork_of(uow, session)
    async with uow() as u:
        records = await u.activity.turn_records(session.id)
        assert await u.activity.turn_records(fork.id) == []  # a fork has only its own turns
    assert records == [
        TurnRecord(
            started_at=T0,
            finished_at=T0 + timedelta(seconds=2),
            stop_reason="end_turn",
            requests=1,
            usage=Usage(
                input_tokens=100, output_tokens=20, cache_read_tokens=50, cache_write_tokens=10
            ),
            cost=0.00123,
            error=None,
        ),
        TurnRecord(
            started_at=T0 + timedelta(minutes=5),
            finished_at=T0 + timedelta(minutes=5, seconds=2),
            stop_reason="cancelled",
            requests=1,
            usage=Usage(input_tokens=7, output_tokens=3),
            cost=None,
            error="the model failed",
        ),
    ]


async def test_the_editors_world_is_stored_without_secrets_and_forks_take_it(
    uow: UowFactory,
) -> None:
    session = await store(uow, SessionFactory())
    servers = ({"name": "fs", "type": "stdio", "command": "c", "args": [], "env": ["TOKEN"]},)
    session.open_with(("/extra/a", "/extra/b"), servers)
    async with uow() as u:
        await u.sessions.save(session)
        await u.commit()
    loaded = await load(uow, session.id)
    assert loaded is not None
    assert loaded.additional_directories == ("/extra/a", "/extra/b")
    assert loaded.mcp_servers == servers
    async with uow() as u:
        [summary] = await u.listing.list_page(cwd=None, after=None, limit=5)
    assert summary.additional_directories == ("/extra/a", "/extra/b")
    fork = loaded.fork(SessionId("fork-1"), at=T0)
    async with uow() as u:
        await u.sessions.fork(loaded, fork)
        await u.commit()
    forked = await load(uow, "fork-1")
    assert forked is not None and forked.additional_directories == ("/extra/a", "/extra/b")


async def test_the_words_a_user_typed_are_kept_beside_their_expansion(uow: UowFactory) -> None:
    session = await store(uow, SessionFactory())
    message = MessageFactory(
        content=(TextBlock(text="Please review app.py."),),
        created_at=session.updated_at,
        typed="/mcp__docs__review app.py",
    )
    session.add_message(message)
    async with uow() as u:
        await u.sessions.save(session)
        await u.commit()
    loaded = await load(uow, session.id)
    assert loaded is not None
    [back] = loaded.messages
    assert back.typed == "/mcp__docs__review app.py"
    assert back.shown_content() == (TextBlock(text="/mcp__docs__review app.py"),)
    assert back.content == (TextBlock(text="Please review app.py."),)


async def test_the_clients_system_prompt_is_stored_replaced_and_forked(uow: UowFactory) -> None:
    session = await store(uow, SessionFactory())
    assert (await load(uow, session.id)).system_prompt is None  # type: ignore[union-attr]
    first = ClientPrompt(mode=ClientPromptMode.APPEND, texts=("Be brief.", "Use SI units."))
    then = ClientPrompt(mode=ClientPromptMode.OVERRIDE, texts=("You are a reviewer.",))
    for prompt in (first, then):
        session.set_system_prompt(prompt)
        async with uow() as u:
            await u.sessions.save(session)
            await u.commit()
        loaded = await load(uow, session.id)
        assert loaded is not None and loaded.system_prompt == prompt
    assert loaded is not None
    async with uow() as u:
        await u.sessions.fork(loaded, loaded.fork(SessionId("fork-2"), at=T0))
        await u.commit()
    forked = await load(uow, "fork-2")
    assert forked is not None and forked.system_prompt == then


async def test_a_rewind_cuts_the_stored_history_and_its_undo_puts_it_back(
    uow: UowFactory,
) -> None:
    source = await store(uow, SessionFactory())
    for text in ("a", "b", "c"):
        await append(uow, source, text)
    fork = await fork_of(uow, source)  # shares all three
    cut = source.cut_at(1)
    async with uow() as u:
        await u.sessions.rewrite_history(source, 1)
        await u.commit()
    assert texts(await load(uow, source.id)) == ["a"]
    assert texts(await load(uow, fork.id)) == ["a", "b", "c"]  # the fork is left whole
    source.put_back(cut)
    async with uow() as u:
        await u.sessions.rewrite_history(source, 1)
        await u.commit()
    assert texts(await load(uow, source.id)) == ["a", "b", "c"]
    await append(uow, source, "d")
    assert texts(await load(uow, source.id)) == ["a", "b", "c", "d"]
