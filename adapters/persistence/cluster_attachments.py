"""The cluster's attachment registry (replicas, session_attachments) in SQL that SQLite
and PostgreSQL both run. Moments are the database's own on PostgreSQL, as the turn leases'
are: replicas on several machines need not agree on the time."""

from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.dialect import insert_or_update
from adapters.persistence.tables import replicas, session_attachments, session_leases
from adapters.persistence.transactions import Transactions
from application.ports.cluster_attachments import ClusterAttachments, Swept

_r = replicas.c
_a = session_attachments.c
_lease = session_leases.c


class SqlAlchemyClusterAttachments(Transactions, ClusterAttachments):
    def __init__(
        self, engine: AsyncEngine, reader: AsyncEngine | None = None, *, database_clock: bool
    ) -> None:
        super().__init__(
            engine, reader, "cluster attachment registry", database_clock=database_clock
        )

    async def renew(self, replica_id: str, now: datetime, seconds: float) -> bool:
        async with self._transaction() as db:
            until = await self._moment(db, now) + timedelta(seconds=seconds)
            renewed = await db.execute(
                update(replicas).where(_r.id == replica_id).values(expires_at=until)
            )
            if renewed.rowcount:
                return True
            row = {"id": replica_id, "expires_at": until}
            await db.execute(insert_or_update(db, replicas, row, keys=("id",)))
            return False

    async def attach(self, session_id: str, replica_id: str, clients: int, now: datetime) -> None:
        async with self._transaction() as db:
            if clients <= 0:
                await db.execute(
                    delete(session_attachments).where(
                        _a.session_id == session_id, _a.replica_id == replica_id
                    )
                )
                return
            row = {
                "session_id": session_id,
                "replica_id": replica_id,
                "clients": clients,
                "attached_at": await self._moment(db, now),
            }
            keys = ("session_id", "replica_id")
            await db.execute(insert_or_update(db, session_attachments, row, keys=keys))

    async def watchers(self, now: datetime) -> dict[str, set[str]]:
        async with self._transaction(reading=True) as db:
            moment = await self._moment(db, now)
            rows = (
                await db.execute(
                    select(_a.session_id, _a.replica_id)
                    .join(replicas, _r.id == _a.replica_id)
                    .where(_r.expires_at > moment)
                )
            ).all()
        found: dict[str, set[str]] = {}
        for session_id, replica_id in rows:
            found.setdefault(session_id, set()).add(replica_id)
        return found

    async def is_live(self, replica_id: str, now: datetime) -> bool:
        async with self._transaction(reading=True) as db:
            moment = await self._moment(db, now)
            found = await db.scalar(
                select(_r.id).where(_r.id == replica_id, _r.expires_at > moment)
            )
        return found is not None

    async def sweep(self, now: datetime) -> Swept:
        async with self._transaction() as db:
            moment = await self._moment(db, now)
            gone = tuple(
                (
                    await db.execute(
                        delete(replicas).where(_r.expires_at <= moment).returning(_r.id)
                    )
                ).scalars()
            )
            if not gone:
                return Swept()
            await db.execute(delete(session_attachments).where(_a.replica_id.in_(gone)))
            held = await db.execute(
                select(_lease.session_id, _lease.holder).where(_lease.holder.in_(gone))
            )
            interrupted = tuple((row.session_id, row.holder) for row in held)
        return Swept(replicas=gone, interrupted=interrupted)

    async def leave(self, replica_id: str) -> None:
        async with self._transaction() as db:
            await db.execute(delete(session_attachments).where(_a.replica_id == replica_id))
            await db.execute(delete(replicas).where(_r.id == replica_id))
