"""The session journal and the HTTP connection records on SQLite and PostgreSQL, through
the journal itself: batches, numbering across a restart, cursors, pruning."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.journal_store import (
    SqlAlchemyConnectionRecords,
    SqlAlchemyUpdateJournalStore,
)
from adapters.persistence.sqlite import read_only
from adapters.protocol.journal import CursorExpired, JournalTerms, UpdateJournal, seq_of
from application.ports.update_journal import ConnectionRecord

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TERMS = JournalTerms(flush_seconds=3600, flush_events=1000, keep_events=40)


def update(text: str) -> dict[str, object]:
    return {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
            "messageId": "m1",
        },
        "_meta": {"other": {"kept": True}},
    }


def store(engine: AsyncEngine) -> SqlAlchemyUpdateJournalStore:
    return SqlAlchemyUpdateJournalStore(engine, read_only(engine))


async def test_a_batch_round_trips_and_numbering_survives_a_restart(engine: AsyncEngine) -> None:
    first = UpdateJournal(store(engine), lambda: T0, TERMS)
    sent = [await first.record("s1", update(f"part {n} ✓")) for n in range(30)]
    await first.record("s2", update("other"))
    await first.aclose()
    restarted = UpdateJournal(store(engine), lambda: T0, TERMS)
    assert await restarted.missed("s1", 25) == sent[25:]
    assert sent[3]["_meta"] == {"other": {"kept": True}, "iac_code": {"seq": 4}}
    assert seq_of(await restarted.record("s1", update("next"))) == 31
    assert seq_of(await restarted.record("s2", update("next"))) == 2


async def test_a_lone_surrogate_from_a_model_is_stored_repaired(engine: AsyncEngine) -> None:
    journal = UpdateJournal(store(engine), lambda: T0, TERMS)
    await journal.record("s1", update("bad \ud800 text"))
    [replayed] = await journal.missed("s1", 0)
    text = replayed["update"]["content"]["text"]
    assert text.startswith("bad ") and text.endswith(" text")
    text.encode()  # valid UTF-8 now


async def test_a_seq_stored_twice_keeps_the_first(engine: AsyncEngine) -> None:
    journal_store = store(engine)
    await journal_store.append(T0, [("s1", 1, '{"n": 1}')])
    await journal_store.append(T0, [("s1", 1, '{"n": 2}'), ("s1", 2, '{"n": 3}')])
    window = await journal_store.window("s1", 0, 10)
    assert [u.params for u in window.updates] == ['{"n": 1}', '{"n": 3}']
    assert (window.oldest, window.newest) == (1, 2)


async def test_pruning_by_count_refuses_older_cursors(engine: AsyncEngine) -> None:
    journal = UpdateJournal(store(engine), lambda: T0, TERMS)
    for n in range(100):
        await journal.record("s1", update(str(n)))
    await journal.flush()
    window = await store(engine).window("s1", 0, 1000)
    assert window.newest == 100
    assert 40 <= len(window.updates) <= 50  # pruned in steps of a quarter of 40
    assert len(await journal.missed("s1", window.oldest - 1)) == 100 - window.oldest + 1
    with pytest.raises(CursorExpired):
        await journal.missed("s1", window.oldest - 2)


async def test_pruning_by_age_keeps_each_sessions_newest(engine: AsyncEngine) -> None:
    journal_store = store(engine)
    await journal_store.append(T0, [(sid, seq, "{}") for sid in ("s1", "s2") for seq in (1, 2, 3)])
    await journal_store.append(T0 + timedelta(hours=2), [("s2", 4, "{}")])
    window = await journal_store.window("s2", 3, 10)
    assert [(u.seq, u.created_at) for u in window.updates] == [(4, T0 + timedelta(hours=2))]
    await journal_store.prune_older_than(T0 + timedelta(hours=1))
    assert [u.seq for u in (await journal_store.window("s1", 0, 10)).updates] == [3]
    assert [u.seq for u in (await journal_store.window("s2", 0, 10)).updates] == [4]
    assert await journal_store.newest("s1") == 3


async def test_connection_records_are_saved_replaced_read_and_deleted(engine: AsyncEngine) -> None:
    now = T0
    records = SqlAlchemyConnectionRecords(engine, lambda: now, read_only(engine))
    assert await records.get("c1") is None
    await records.save(ConnectionRecord(id="c1", client_capabilities={"fs": {}}, sessions=("a",)))
    await records.save(
        ConnectionRecord(id="c1", client_capabilities={"fs": {}}, sessions=("a", "b"), next_event=9)
    )
    got = await records.get("c1")
    assert got == ConnectionRecord(
        id="c1", client_capabilities={"fs": {}}, sessions=("a", "b"), next_event=9
    )
    assert got is not None and got.updated_at == T0
    now = T0 + timedelta(hours=1)
    await records.save(ConnectionRecord(id="c2"))
    await records.prune_older_than(T0 + timedelta(minutes=1))
    assert await records.get("c1") is None
    assert await records.get("c2") is not None
    await records.delete("c2")
    assert await records.get("c2") is None
