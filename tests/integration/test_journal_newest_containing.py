"""The journal's newest update holding given text (how a queue lost with a dead process is
found again): on SQLite (and PostgreSQL when configured) and the in-memory fake alike."""

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.acp_v1.dropped_queues import queue_in
from adapters.protocol.journal import JournalTerms, UpdateJournal
from application.ports.update_journal import UpdateJournalStore
from tests.fakes.journal import InMemoryJournalStore
from tests.integration.test_journal_store import store

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TERMS = JournalTerms(flush_seconds=3600, flush_events=1000, keep_events=40)
PIECES = ('"sessionUpdate":"session_info_update"', '"queue":[')


def queue_update(*previews: str) -> dict[str, object]:
    queue = [{"id": f"q{n}", "preview": p, "queuedBy": "zed"} for n, p in enumerate(previews)]
    return {
        "sessionId": "s1",
        "update": {"sessionUpdate": "session_info_update", "_meta": {"iac_code": {"queue": queue}}},
    }


def chunk(text: str) -> dict[str, object]:
    return {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
    }


async def newest_queue(journal_store: UpdateJournalStore) -> list[str]:
    journal = UpdateJournal(journal_store, lambda: T0, TERMS)
    await journal.record("s1", queue_update("a"))
    await journal.record("s1", queue_update("a", "b_%"))
    await journal.record("s1", chunk('model text with "queue":[ and session_info_update in it'))
    await journal.record("s2", queue_update("other session"))
    found = await journal.newest_containing("s1", *PIECES)
    assert await journal.newest_containing("s3", *PIECES) is None
    return [e["preview"] for e in queue_in(found)]


async def test_sqlite_finds_the_newest_queue_of_the_session(engine: AsyncEngine) -> None:
    assert await newest_queue(store(engine)) == ["a", "b_%"]


async def test_the_fake_finds_the_same() -> None:
    assert await newest_queue(InMemoryJournalStore()) == ["a", "b_%"]


def test_anything_but_a_queue_update_holds_no_queue() -> None:
    assert queue_in(None) == []
    assert queue_in(chunk("x")) == []
    assert queue_in({"update": {"_meta": {"iac_code": {"queue": "no"}}}}) == []
    assert queue_in({"update": {"_meta": []}}) == []
