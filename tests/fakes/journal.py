"""In-memory stores of the session journal and the HTTP connection records."""

import asyncio
from collections.abc import Sequence
from datetime import datetime

from application.ports.update_journal import (
    ConnectionRecord,
    ConnectionRecords,
    JournaledUpdate,
    JournalWindow,
    NewUpdate,
    UpdateJournalStore,
)


class InMemoryJournalStore(UpdateJournalStore):
    """`batches` counts transactions; `fail` makes the next writes raise; `gate`, when set,
    holds each write until it is set (a slow database)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], JournaledUpdate] = {}
        self.batches: list[int] = []
        self.fail = False
        self.gate: asyncio.Event | None = None
        self.reads = 0
        self.written = asyncio.Event()  # set by each write

    async def newest(self, session_id: str) -> int:
        self.reads += 1
        return max((seq for sid, seq in self.rows if sid == session_id), default=0)

    async def append(self, at: datetime, updates: Sequence[NewUpdate]) -> None:
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise OSError("the database is unreachable")
        self.batches.append(len(updates))
        self.written.set()
        for session_id, seq, params in updates:
            row = JournaledUpdate(session_id=session_id, seq=seq, created_at=at, params=params)
            self.rows.setdefault((session_id, seq), row)

    async def window(self, session_id: str, after: int, limit: int) -> JournalWindow:
        seqs = sorted(seq for sid, seq in self.rows if sid == session_id)
        return JournalWindow(
            oldest=seqs[0] if seqs else 0,
            newest=seqs[-1] if seqs else 0,
            updates=[self.rows[(session_id, s)] for s in seqs if s > after][:limit],
        )

    async def newest_containing(self, session_id: str, *pieces: str) -> str | None:
        seqs = sorted((seq for sid, seq in self.rows if sid == session_id), reverse=True)
        for seq in seqs:
            params = self.rows[(session_id, seq)].params
            if all(piece in params for piece in pieces):
                return params
        return None

    async def prune(self, session_id: str, below: int) -> None:
        for key in [k for k in self.rows if k[0] == session_id and k[1] < below]:
            del self.rows[key]

    async def prune_older_than(self, cutoff: datetime) -> None:
        newest: dict[str, int] = {}
        for sid, seq in self.rows:
            newest[sid] = max(newest.get(sid, 0), seq)
        for key, row in list(self.rows.items()):
            if row.created_at < cutoff and key[1] < newest[key[0]]:
                del self.rows[key]


class InMemoryConnectionRecords(ConnectionRecords):
    def __init__(self) -> None:
        self.records: dict[str, ConnectionRecord] = {}
        self.saves = 0

    async def save(self, record: ConnectionRecord) -> None:
        self.saves += 1
        self.records[record.id] = record

    async def get(self, connection_id: str) -> ConnectionRecord | None:
        return self.records.get(connection_id)

    async def delete(self, connection_id: str) -> None:
        self.records.pop(connection_id, None)

    async def prune_older_than(self, cutoff: datetime) -> None:
        for key, record in list(self.records.items()):
            if record.updated_at is not None and record.updated_at < cutoff:
                del self.records[key]
