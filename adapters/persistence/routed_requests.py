"""Routed requests and asked questions in their tables (SQL both SQLite and PostgreSQL
run); each call is one short transaction. Claiming and abandoning are conditional UPDATEs
of a pending row: whichever commits first wins, the other changes no row."""

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, insert, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncEngine

from adapters.persistence.tables import asked_questions, routed_requests, session_leases
from adapters.persistence.transactions import Transactions
from application.ports.routed_requests import (
    AskedQuestion,
    RequestProgress,
    RequestState,
    RoutedRequest,
    RoutedRequests,
)

_rq = routed_requests.c
_q = asked_questions.c
_lease = session_leases.c


class SqlAlchemyRoutedRequests(Transactions, RoutedRequests):
    def __init__(
        self,
        engine: AsyncEngine,
        reader: AsyncEngine | None = None,
        *,
        database_clock: bool = False,
    ) -> None:
        # As the leases go (adapters/persistence/leases): a question's turn is live by them.
        super().__init__(engine, reader, "routed request", database_clock=database_clock)

    async def send(self, request: RoutedRequest, now: datetime) -> None:
        async with self._transaction() as db:
            await db.execute(
                insert(routed_requests).values(
                    id=request.id,
                    session_id=request.session_id,
                    holder=request.holder,
                    sender=request.sender,
                    method=request.method,
                    params=request.params,
                    state=RequestState.PENDING.value,
                    created_at=now,
                )
            )

    async def claim(self, request_id: str, holder: str) -> RoutedRequest | None:
        async with self._transaction() as db:
            claimed = await db.execute(
                update(routed_requests)
                .where(
                    _rq.id == request_id,
                    _rq.holder == holder,
                    _rq.state == RequestState.PENDING.value,
                )
                .values(state=RequestState.CLAIMED.value)
                .returning(_rq.id, _rq.session_id, _rq.holder, _rq.sender, _rq.method, _rq.params)
            )
            row = claimed.first()
        return None if row is None else _request(row)

    async def finish(self, request_id: str, outcome: dict[str, Any]) -> None:
        async with self._transaction() as db:
            await db.execute(
                update(routed_requests)
                .where(_rq.id == request_id, _rq.state == RequestState.CLAIMED.value)
                .values(state=RequestState.DONE.value, outcome=outcome)
            )

    async def progress(self, request_id: str) -> RequestProgress | None:
        async with self._transaction(reading=True) as db:
            row = (
                await db.execute(select(_rq.state, _rq.outcome).where(_rq.id == request_id))
            ).first()
        return None if row is None else RequestProgress(RequestState(row[0]), row[1])

    async def abandon(self, request_id: str) -> bool:
        async with self._transaction() as db:
            abandoned = await db.execute(
                update(routed_requests)
                .where(_rq.id == request_id, _rq.state == RequestState.PENDING.value)
                .values(state=RequestState.ABANDONED.value)
            )
        return abandoned.rowcount > 0

    async def forget(self, request_id: str) -> None:
        async with self._transaction() as db:
            await db.execute(delete(routed_requests).where(_rq.id == request_id))

    async def pending_for(self, holder: str) -> list[str]:
        async with self._transaction(reading=True) as db:
            rows = await db.execute(
                select(_rq.id)
                .where(_rq.holder == holder, _rq.state == RequestState.PENDING.value)
                .order_by(_rq.created_at)
            )
        return [str(row[0]) for row in rows]

    async def sweep(self, replica: str) -> None:
        async with self._transaction() as db:
            await db.execute(delete(routed_requests).where(_rq.sender == replica))
            await db.execute(delete(asked_questions).where(_q.holder == replica))

    async def post_question(self, question: AskedQuestion, now: datetime) -> None:
        async with self._transaction() as db:
            await db.execute(
                insert(asked_questions).values(
                    id=question.id,
                    session_id=question.session_id,
                    holder=question.holder,
                    subject=question.subject,
                    # The columns are older than the typed question: its kind and body.
                    method=question.kind,
                    params=question.body,
                    created_at=now,
                )
            )

    async def settle_question(self, question_id: str) -> None:
        async with self._transaction() as db:
            await db.execute(delete(asked_questions).where(_q.id == question_id))

    async def question(self, question_id: str) -> AskedQuestion | None:
        async with self._transaction(reading=True) as db:
            row = (await db.execute(_QUESTION_COLUMNS.where(_q.id == question_id))).first()
        return None if row is None else _question(row)

    async def questions_of(self, session_id: str, now: datetime) -> list[AskedQuestion]:
        async with self._transaction(reading=True) as db:
            now = await self._moment(db, now)
            rows = await db.execute(
                _QUESTION_COLUMNS.join_from(asked_questions, session_leases, _live(now))
                .where(_q.session_id == session_id)
                .order_by(_q.created_at)
            )
        return [_question(row) for row in rows]


_QUESTION_COLUMNS = select(_q.id, _q.session_id, _q.holder, _q.subject, _q.method, _q.params)


def _live(now: datetime) -> ColumnElement[bool]:
    """The question's holder still holds a live lease on its session."""
    return and_(
        _lease.session_id == _q.session_id,
        _lease.holder == _q.holder,
        _lease.expires_at > now,
    )


def _request(row: Row[Any, Any, Any, Any, Any, Any]) -> RoutedRequest:
    id_, session_id, holder, sender, method, params = row
    return RoutedRequest(
        id=id_, session_id=session_id, holder=holder, sender=sender, method=method, params=params
    )


def _question(row: Row[Any, Any, Any, Any, Any, Any]) -> AskedQuestion:
    id_, session_id, holder, subject, kind, body = row
    return AskedQuestion(
        id=id_, session_id=session_id, holder=holder, subject=subject, kind=kind, body=body
    )
