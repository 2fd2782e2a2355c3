"""One contract, three implementations: forks and repairs of in-memory copies older than the
store hold the right history and undo nothing another writer stored."""

import pytest

from application.errors import SessionConflict
from domain.content import TextBlock
from tests.factories import MessageFactory, SessionFactory
from tests.integration.repository_contract.support import (
    UowFactory,
    append,
    fork_of,
    load,
    store,
    texts,
)

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]


async def test_a_fork_of_a_copy_older_than_the_store_holds_the_copys_history(
    uow: UowFactory,
) -> None:
    # Another replica appended since this copy was read: the fork is what the copy shows.
    source = await store(uow, SessionFactory())
    await append(uow, source, "a")
    copy = await load(uow, source.id)
    assert copy is not None
    await append(uow, source, "b")
    fork = await fork_of(uow, copy)
    assert texts(await load(uow, fork.id)) == ["a"]
    await append(uow, fork, "fork-only")
    assert texts(await load(uow, fork.id)) == ["a", "fork-only"]


async def test_a_fork_of_a_copy_repaired_in_memory_holds_the_repaired_history(
    uow: UowFactory,
) -> None:
    # A load on replica B while the turn runs on A repairs B's copy in memory only
    # (kept in memory); A then stores more. A fork made on B holds what B showed.
    source = await store(uow, SessionFactory())
    for text in ("a", "b"):
        await append(uow, source, text)
    stored = await load(uow, source.id)
    assert stored is not None
    shown = [*stored.messages[:1], MessageFactory(content=(TextBlock(text="b, repaired"),))]
    copy = stored.with_history(shown)
    copy.keep_in_memory()
    await append(uow, source, "c")
    fork = await fork_of(uow, copy)
    assert texts(await load(uow, fork.id)) == ["a", "b, repaired"]


async def test_a_repair_does_not_undo_what_another_writer_stored_since(uow: UowFactory) -> None:
    # Replica B read the session and repairs it; meanwhile replica A ran a turn of it.
    session = await store(uow, SessionFactory())
    await append(uow, session, "a")
    copy = await load(uow, session.id)
    assert copy is not None
    await append(uow, session, "b")
    repaired = copy.with_history([MessageFactory(content=(TextBlock(text="A"),))])
    with pytest.raises(SessionConflict):
        async with uow() as u:
            await u.sessions.rewrite_history(repaired, 0)
            await u.commit()
    assert texts(await load(uow, session.id)) == ["a", "b"]


async def test_a_fork_of_a_copy_with_an_append_not_stored_holds_it(uow: UowFactory) -> None:
    # The append's save failed (the database went away): it stays recorded on the copy,
    # and may never be stored at that position; the fork holds it as the copy does.
    source = await store(uow, SessionFactory())
    await append(uow, source, "a")
    other = await load(uow, source.id)
    assert other is not None
    source.add_message(MessageFactory(content=(TextBlock(text="not stored"),)))
    fork = await fork_of(uow, source)
    await append(uow, other, "stored instead")  # another writer takes that position
    assert texts(await load(uow, fork.id)) == ["a", "not stored"]
