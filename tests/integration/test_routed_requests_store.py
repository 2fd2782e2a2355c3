"""The routed requests' and asked questions' tables on SQLite and PostgreSQL: a request is
applied once or never (claim and abandon exclude each other), and a question is shown
only while its holder holds the session's lease."""

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.routed_requests import SqlAlchemyRoutedRequests
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.ports.routed_requests import (
    AskedQuestion,
    RequestProgress,
    RequestState,
    RoutedRequest,
)
from domain.ids import SessionId
from tests.factories import T0, SessionFactory

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres")]

HOLDER, SENDER = "replica-1", "replica-2"


async def stored_session(engine: AsyncEngine) -> SessionId:
    session = SessionFactory()
    async with SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False)) as uow:
        await uow.sessions.add(session)
        await uow.commit()
    return session.id


def request(n: int = 1, session_id: str = "s1") -> RoutedRequest:
    return RoutedRequest(
        id=f"rq-{n}",
        session_id=session_id,
        holder=HOLDER,
        sender=SENDER,
        method="session/set_mode",
        params={"sessionId": session_id, "modeId": "plan"},
    )


async def test_a_request_is_claimed_once_answered_and_forgotten(engine: AsyncEngine) -> None:
    store = SqlAlchemyRoutedRequests(engine)
    await store.send(request(), T0)
    assert await store.pending_for(HOLDER) == ["rq-1"]
    assert await store.claim("rq-1", SENDER) is None  # not meant for it

    claims = await asyncio.gather(store.claim("rq-1", HOLDER), store.claim("rq-1", HOLDER))

    assert [c for c in claims if c is not None] == [request()]
    assert await store.pending_for(HOLDER) == []
    assert not await store.abandon("rq-1")  # too late: it is being applied
    await store.finish("rq-1", {"result": {}})
    assert await store.progress("rq-1") == RequestProgress(RequestState.DONE, {"result": {}})
    await store.forget("rq-1")
    assert await store.progress("rq-1") is None


async def test_an_abandoned_request_is_never_claimed(engine: AsyncEngine) -> None:
    store = SqlAlchemyRoutedRequests(engine)
    await store.send(request(2), T0)

    assert await store.abandon("rq-2")

    assert await store.claim("rq-2", HOLDER) is None
    assert await store.progress("rq-2") == RequestProgress(RequestState.ABANDONED)
    assert await store.pending_for(HOLDER) == []


async def test_a_question_is_shown_while_its_holder_holds_the_lease(engine: AsyncEngine) -> None:
    store = SqlAlchemyRoutedRequests(engine)
    leases = SqlAlchemyTurnLeases(engine)
    sid = await stored_session(engine)
    assert await leases.acquire(sid, HOLDER, T0, T0 + timedelta(seconds=30))
    question = AskedQuestion(
        id="q-1",
        session_id=sid,
        holder=HOLDER,
        subject="call-1",
        kind="permission",
        body={"sessionId": sid, "request": {"toolCallId": "call-1"}},
    )
    await store.post_question(question, T0)

    assert await store.questions_of(sid, T0 + timedelta(seconds=1)) == [question]
    assert await store.question("q-1") == question
    # The holder's lease lapsed (it died): its question is asked no more.
    assert await store.questions_of(sid, T0 + timedelta(seconds=31)) == []
    await store.settle_question("q-1")
    assert await store.question("q-1") is None
    assert await store.questions_of(sid, T0 + timedelta(seconds=1)) == []


async def test_a_starting_replica_sweeps_what_its_previous_process_left(
    engine: AsyncEngine,
) -> None:
    store = SqlAlchemyRoutedRequests(engine)
    mine = request(1)  # sent by SENDER, for HOLDER
    theirs = replace(request(2), sender="replica-3")
    await store.send(mine, T0)
    await store.send(theirs, T0)
    asked = AskedQuestion(id="q-2", session_id="s1", holder=SENDER, subject="c", kind="k", body={})
    await store.post_question(asked, T0)

    await store.sweep(SENDER)

    assert await store.progress("rq-1") is None  # its waiter died with it
    assert await store.progress("rq-2") == RequestProgress(RequestState.PENDING)
    assert await store.question("q-2") is None  # its turn died with it
