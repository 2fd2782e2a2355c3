"""The session journal: numbering, batched writes, replays after a cursor, pruning."""

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.protocol.journal import (
    CursorExpired,
    JournalTerms,
    UpdateJournal,
    cursor_of,
    seq_of,
)
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from tests.fakes.journal import InMemoryJournalStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# The timer never fires within a test: batches are written by size or by flush().
SLOW = JournalTerms(flush_seconds=3600, flush_events=1000, keep_events=100)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def chunk(text: str, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
    }
    if meta:
        params["_meta"] = meta
    return params


def journal(store: InMemoryJournalStore, terms: JournalTerms = SLOW) -> UpdateJournal:
    return UpdateJournal(store, Clock(), terms)


async def test_updates_are_numbered_per_session_from_one() -> None:
    j = journal(InMemoryJournalStore())
    first = await j.record("s1", chunk("a"))
    second = await j.record("s1", chunk("b"))
    other = await j.record("s2", chunk("c"))
    assert [seq_of(first), seq_of(second), seq_of(other)] == [1, 2, 1]
    assert first["_meta"] == {"iac_code": {"seq": 1}}
    assert first["update"] == chunk("a")["update"]


async def test_existing_meta_is_kept() -> None:
    j = journal(InMemoryJournalStore())
    stamped = await j.record("s1", chunk("a", other={"x": 1}, iac_code={"turn": "idle"}))
    assert stamped["_meta"] == {"other": {"x": 1}, "iac_code": {"turn": "idle", "seq": 1}}


async def test_numbering_continues_after_what_another_process_stored() -> None:
    store = InMemoryJournalStore()
    before = journal(store)
    for text in "abc":
        await before.record("s1", chunk(text))
    await before.flush()
    after = journal(store)  # a restarted process
    reads = store.reads
    assert seq_of(await after.record("s1", chunk("d"))) == 4
    assert seq_of(await after.record("s1", chunk("e"))) == 5
    assert store.reads == reads + 1  # the stored maximum is read once per session


async def test_concurrent_first_updates_share_one_read_and_get_distinct_numbers() -> None:
    store = InMemoryJournalStore()
    j = journal(store)
    stamped = await asyncio.gather(*(j.record("s1", chunk(str(n))) for n in range(5)))
    assert sorted(seq_of(p) for p in stamped) == [1, 2, 3, 4, 5]
    assert store.reads == 1


async def test_nothing_is_written_per_update_a_batch_is_one_write() -> None:
    store = InMemoryJournalStore()
    j = journal(store)
    for n in range(50):
        await j.record("s1", chunk(str(n)))
    assert store.batches == []
    await j.flush()
    assert store.batches == [50]


async def test_a_full_batch_is_written_without_waiting_for_the_timer() -> None:
    store = InMemoryJournalStore()
    j = journal(store, JournalTerms(flush_seconds=3600, flush_events=10, keep_events=100))
    for n in range(10):
        await j.record("s1", chunk(str(n)))
    await asyncio.wait_for(store.written.wait(), 5)  # no flush() asked for
    assert store.batches == [10]
    for n in range(5):
        await j.record("s1", chunk(str(n)))
    await j.aclose()
    assert store.batches == [10, 5]


async def test_the_timer_writes_a_partial_batch() -> None:
    store = InMemoryJournalStore()
    j = journal(store, JournalTerms(flush_seconds=0.01, flush_events=1000, keep_events=100))
    await j.record("s1", chunk("a"))
    await asyncio.wait_for(store.written.wait(), 5)
    assert store.batches == [1]


async def test_missed_sends_exactly_the_updates_after_the_cursor() -> None:
    j = journal(InMemoryJournalStore())
    sent = [await j.record("s1", chunk(str(n))) for n in range(6)]
    assert await j.missed("s1", 4) == sent[4:]  # pending ones are written first
    assert await j.missed("s1", 6) == []
    assert await j.missed("s1", 0) == sent


async def test_a_cursor_ahead_or_too_old_is_refused_never_a_gap() -> None:
    store = InMemoryJournalStore()
    j = journal(store, JournalTerms(flush_seconds=3600, flush_events=1000, keep_events=8))
    for n in range(20):
        await j.record("s1", chunk(str(n)))
    await j.flush()
    kept = sorted(seq for _, seq in store.rows)
    assert kept[-1] == 20 and len(kept) <= 8 + 8 // 4  # pruned in steps of a quarter
    oldest = kept[0]
    assert len(await j.missed("s1", oldest - 1)) == 20 - oldest + 1
    with pytest.raises(CursorExpired) as expired:
        await j.missed("s1", oldest - 2)
    assert expired.value.reason == "cursor_expired"
    with pytest.raises(CursorExpired) as ahead:
        await j.missed("s1", 21)
    assert ahead.value.reason == "cursor_ahead"
    assert ahead.value.data()["newest"] == 20


async def test_a_write_that_failed_is_retried_and_a_dropped_one_is_a_refused_cursor() -> None:
    store = InMemoryJournalStore()
    j = journal(store, JournalTerms(flush_seconds=3600, flush_events=1000, max_pending=3))
    store.fail = True
    for n in range(5):
        await j.record("s1", chunk(str(n)))
    await j.flush()
    assert store.rows == {}
    store.fail = False
    await j.flush()
    assert sorted(seq for _, seq in store.rows) == [3, 4, 5]  # 1 and 2 did not fit
    assert [seq_of(p) for p in await j.missed("s1", 2)] == [3, 4, 5]
    with pytest.raises(CursorExpired):
        await j.missed("s1", 1)


async def test_a_crash_before_the_write_is_a_cursor_ahead() -> None:
    store = InMemoryJournalStore()
    crashed = journal(store)
    await crashed.record("s1", chunk("a"))
    await crashed.flush()
    await crashed.record("s1", chunk("b"))  # seq 2: never written (the process died)
    restarted = journal(store)
    with pytest.raises(CursorExpired) as ahead:
        await restarted.missed("s1", 2)
    assert ahead.value.reason == "cursor_ahead"


async def test_age_pruning_keeps_each_sessions_newest() -> None:
    store = InMemoryJournalStore()
    clock = Clock()
    terms = JournalTerms(flush_seconds=3600, keep_seconds=60, prune_every_seconds=0)
    j = UpdateJournal(store, clock, terms)
    for n in range(3):
        await j.record("s1", chunk(str(n)))
    await j.flush()
    clock.now = T0 + timedelta(seconds=61)
    await j.record("s2", chunk("x"))
    await j.flush()
    assert sorted(store.rows) == [("s1", 3), ("s2", 1)]
    fresh = UpdateJournal(store, clock, terms)
    assert seq_of(await fresh.record("s1", chunk("y"))) == 4


def test_cursor_of_reads_and_checks_the_cursor() -> None:
    assert cursor_of(None) is None
    assert cursor_of({"_meta": {"other": 1}}) is None
    assert cursor_of({"_meta": {"iac_code": {"after": 7}}}) == 7
    for bad in (-1, "7", 1.5, True, None):
        with pytest.raises(RpcError) as refused:
            cursor_of({"_meta": {"iac_code": {"after": bad}}})
        assert refused.value.code == INVALID_PARAMS
        assert refused.value.data["reason"] == "invalid_cursor"
