"""Turn leases in the session_leases table, in SQL that SQLite and PostgreSQL both run.

Taking a lease is an UPDATE of a lapsed (or our own) row, else an INSERT: the primary key
turns a concurrent taker's INSERT into an IntegrityError, read as "held elsewhere". Each
call is one short transaction of its own; a failed INSERT ends it (PostgreSQL aborts the
transaction on an error), so nothing follows it there."""

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    delete,
    insert,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.tables import session_leases, sessions
from adapters.persistence.transactions import CONTENTION_PATIENCE, Transactions
from application.ports.leases import LeaseState, TurnLeases
from domain.ids import SessionId

_lease = session_leases.c


class SqlAlchemyTurnLeases(Transactions, TurnLeases):
    # A concurrent taker's INSERT fails on the primary key: `acquire` reads it as an answer.
    passed_through = (IntegrityError,)

    def __init__(
        self,
        engine: AsyncEngine,
        reader: AsyncEngine | None = None,
        *,
        database_clock: bool = False,
        patience: float = CONTENTION_PATIENCE,
    ) -> None:
        super().__init__(
            engine,
            reader,
            "session's turn lease",
            database_clock=database_clock,
            patience=patience,
        )

    async def acquire(
        self,
        session_id: SessionId,
        holder: str,
        now: datetime,
        until: datetime,
        *,
        gone: str | None = None,
    ) -> bool:
        # A turn waits for a busy database rather than failing its prompt (so do the other
        # writes below: a lease renewed late is better than a turn stopped for nothing).
        return await self._patiently(lambda: self._acquire(session_id, holder, now, until, gone))

    async def _acquire(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime, gone: str | None
    ) -> bool:
        holders = [holder] if gone is None else [holder, gone]
        try:
            async with self._transaction() as db:
                moment = await self._moment(db, now)
                now, until = moment, until + (moment - now)
                # A session deleted while forks live keeps its row, hidden: no turn of it.
                if await db.scalar(self._stored(session_id)) is None:
                    return False
                taken = await db.execute(
                    update(session_leases)
                    .where(
                        _lease.session_id == session_id,
                        or_(_lease.expires_at <= now, _lease.holder.in_(holders)),
                    )
                    .values(holder=holder, expires_at=until, cancel_requested=False)
                )
                if taken.rowcount == 0:
                    await db.execute(
                        insert(session_leases).values(
                            session_id=session_id,
                            holder=holder,
                            expires_at=until,
                            cancel_requested=False,
                        )
                    )
        except IntegrityError:  # a live lease of another holder, or no such session
            return False
        return True

    async def renew(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime
    ) -> LeaseState:
        return await self._patiently(lambda: self._renew(session_id, holder, now, until))

    async def _renew(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime
    ) -> LeaseState:
        async with self._transaction() as db:
            moment = await self._moment(db, now)
            now, until = moment, until + (moment - now)
            renewed = await db.execute(
                update(session_leases)
                .where(self._live_of(session_id, holder, now))
                .values(expires_at=until)
                .returning(_lease.cancel_requested)
            )
            row = renewed.first()
        return LeaseState(held=False) if row is None else LeaseState(True, bool(row[0]))

    async def check(self, session_id: SessionId, holder: str, now: datetime) -> LeaseState:
        async with self._transaction(reading=True) as db:
            now = await self._moment(db, now)
            row = (
                await db.execute(
                    select(_lease.cancel_requested).where(self._live_of(session_id, holder, now))
                )
            ).first()
        return LeaseState(held=False) if row is None else LeaseState(True, bool(row[0]))

    async def release(self, session_id: SessionId, holder: str) -> None:
        await self._patiently(lambda: self._release(session_id, holder))

    async def _release(self, session_id: SessionId, holder: str) -> None:
        async with self._transaction() as db:
            await db.execute(
                delete(session_leases).where(
                    _lease.session_id == session_id, _lease.holder == holder
                )
            )

    async def request_cancel(self, session_id: SessionId, now: datetime) -> bool:
        return await self._patiently(lambda: self._request_cancel(session_id, now))

    async def _request_cancel(self, session_id: SessionId, now: datetime) -> bool:
        async with self._transaction() as db:
            now = await self._moment(db, now)
            asked = await db.execute(
                update(session_leases)
                .where(_lease.session_id == session_id, _lease.expires_at > now)
                .values(cancel_requested=true())
            )
        return asked.rowcount > 0

    async def live_holder(self, session_id: SessionId, now: datetime) -> str | None:
        async with self._transaction(reading=True) as db:
            now = await self._moment(db, now)
            return (
                await db.execute(
                    select(_lease.holder).where(
                        _lease.session_id == session_id, _lease.expires_at > now
                    )
                )
            ).scalar_one_or_none()

    async def stored_version(self, session_id: SessionId) -> int | None:
        async with self._transaction(reading=True) as db:
            version: int | None = await db.scalar(self._stored(session_id))
        return version

    @staticmethod
    def _stored(session_id: SessionId) -> Select[Any]:
        """The version of the session, if stored and not deleted."""
        return select(sessions.c.version).where(
            sessions.c.id == session_id, sessions.c.deleted_at.is_(None)
        )

    @staticmethod
    def _live_of(session_id: SessionId, holder: str, now: datetime) -> ColumnElement[bool]:
        return and_(
            _lease.session_id == session_id, _lease.holder == holder, _lease.expires_at > now
        )
