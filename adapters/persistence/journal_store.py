"""The session journal and the HTTP connection records, in SQL that SQLite and PostgreSQL
both run. Each call is one short transaction; a batch of updates is one INSERT with many
rows (executemany), so a streaming turn costs a transaction per batch, not per chunk."""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.dialect import insert_or_update
from adapters.persistence.tables import http_connections, session_updates
from adapters.persistence.transactions import Transactions
from application.ports.update_journal import (
    ConnectionRecord,
    ConnectionRecords,
    JournaledUpdate,
    JournalWindow,
    NewUpdate,
    UpdateJournalStore,
)

_u = session_updates.c
_c = http_connections.c
_COLUMNS = "session_updates (session_id, seq, created_at, params)"
_APPEND = {  # each driver's own placeholders
    "sqlite": f"INSERT INTO {_COLUMNS} VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    "postgresql": f"INSERT INTO {_COLUMNS} VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
}


def _stored_time(dialect: str, at: datetime) -> Any:
    """`at` as UtcDateTime stores it (naive UTC), in the form SQLAlchemy's own SQLite
    DateTime writes (text), so that reads through the table see the same values."""
    naive = at.astimezone(UTC).replace(tzinfo=None)
    return naive.strftime("%Y-%m-%d %H:%M:%S.%f") if dialect == "sqlite" else naive


class SqlAlchemyUpdateJournalStore(Transactions, UpdateJournalStore):
    def __init__(self, engine: AsyncEngine, reader: AsyncEngine | None = None) -> None:
        super().__init__(engine, reader, "session journal")

    async def newest(self, session_id: str) -> int:
        async with self._transaction(reading=True) as db:
            found = await db.scalar(select(func.max(_u.seq)).where(_u.session_id == session_id))
        return int(found or 0)

    async def append(self, at: datetime, updates: Sequence[NewUpdate]) -> None:
        """One multi-row INSERT through the driver: a batch of thousands of chunks would
        otherwise spend more time in per-row parameter processing than in the database."""
        if not updates:
            return
        async with self._transaction() as db:
            sql, when = _APPEND[db.dialect.name], _stored_time(db.dialect.name, at)
            # Another replica may have numbered the same session: its rows stay.
            await db.exec_driver_sql(
                sql, [(sid, seq, when, params) for sid, seq, params in updates]
            )

    async def newest_containing(self, session_id: str, *pieces: str) -> str | None:
        # Literal pieces: LIKE's own wildcards in them are escaped.
        found = [_u.params.contains(piece, autoescape=True) for piece in pieces]
        async with self._transaction(reading=True) as db:
            params: str | None = await db.scalar(
                select(_u.params)
                .where(_u.session_id == session_id, *found)
                .order_by(_u.seq.desc())
                .limit(1)
            )
        return params

    async def window(self, session_id: str, after: int, limit: int) -> JournalWindow:
        async with self._transaction(reading=True) as db:
            bounds = (
                await db.execute(
                    select(func.min(_u.seq), func.max(_u.seq)).where(_u.session_id == session_id)
                )
            ).one()
            rows = (
                await db.execute(
                    select(_u.seq, _u.created_at, _u.params)
                    .where(_u.session_id == session_id, _u.seq > after)
                    .order_by(_u.seq)
                    .limit(limit)
                )
            ).all()
        return JournalWindow(
            oldest=int(bounds[0] or 0),
            newest=int(bounds[1] or 0),
            updates=[
                JournaledUpdate(
                    session_id=session_id, seq=r.seq, created_at=r.created_at, params=r.params
                )
                for r in rows
            ],
        )

    async def prune(self, session_id: str, below: int) -> None:
        async with self._transaction() as db:
            await db.execute(
                delete(session_updates).where(_u.session_id == session_id, _u.seq < below)
            )

    async def prune_older_than(self, cutoff: datetime) -> None:
        newer = session_updates.alias("newer")
        async with self._transaction() as db:
            await db.execute(
                delete(session_updates).where(
                    _u.created_at < cutoff,
                    select(newer.c.seq)
                    .where(and_(newer.c.session_id == _u.session_id, newer.c.seq > _u.seq))
                    .exists(),
                )
            )


class SqlAlchemyConnectionRecords(Transactions, ConnectionRecords):
    def __init__(self, engine: AsyncEngine, now: Any, reader: AsyncEngine | None = None) -> None:
        super().__init__(engine, reader, "HTTP connection record")
        self._now = now

    async def save(self, record: ConnectionRecord) -> None:
        row = {
            "id": record.id,
            "updated_at": self._now(),
            "record": {
                "clientCapabilities": record.client_capabilities,
                "sessions": list(record.sessions),
                "nextEvent": record.next_event,
            },
        }
        async with self._transaction() as db:
            await db.execute(insert_or_update(db, http_connections, row, keys=("id",)))

    async def get(self, connection_id: str) -> ConnectionRecord | None:
        async with self._transaction(reading=True) as db:
            row = (
                await db.execute(select(_c.record, _c.updated_at).where(_c.id == connection_id))
            ).one_or_none()
        if row is None:
            return None
        stored = row.record if isinstance(row.record, dict) else {}
        sessions = stored.get("sessions")
        next_event = stored.get("nextEvent")
        return ConnectionRecord(
            id=connection_id,
            client_capabilities=stored.get("clientCapabilities"),
            sessions=tuple(s for s in sessions if isinstance(s, str))
            if isinstance(sessions, list)
            else (),
            next_event=next_event if isinstance(next_event, int) else 1,
            updated_at=row.updated_at,
        )

    async def delete(self, connection_id: str) -> None:
        async with self._transaction() as db:
            await db.execute(delete(http_connections).where(_c.id == connection_id))

    async def prune_older_than(self, cutoff: datetime) -> None:
        async with self._transaction() as db:
            await db.execute(delete(http_connections).where(_c.updated_at < cutoff))
