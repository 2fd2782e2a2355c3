"""Routed requests and asked questions in memory, for the routing's use-case tests; the
same rules as the SQL store (claim and abandon exclude each other; a question is listed
while its holder holds a live lease), checked by tests/integration on the real one."""

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from application.ports.leases import TurnLeases
from application.ports.routed_requests import (
    AskedQuestion,
    RequestProgress,
    RequestState,
    RoutedRequest,
    RoutedRequests,
)
from domain.ids import SessionId


@dataclass
class _Row:
    request: RoutedRequest
    state: RequestState = RequestState.PENDING
    outcome: dict[str, Any] | None = None


class InMemoryRoutedRequests(RoutedRequests):
    def __init__(self, leases: TurnLeases) -> None:
        self._leases = leases
        self.rows: dict[str, _Row] = {}
        self.questions: dict[str, AskedQuestion] = {}

    async def send(self, request: RoutedRequest, now: datetime) -> None:
        self.rows[request.id] = _Row(request)

    async def claim(self, request_id: str, holder: str) -> RoutedRequest | None:
        row = self.rows.get(request_id)
        if row is None or row.request.holder != holder or row.state is not RequestState.PENDING:
            return None
        row.state = RequestState.CLAIMED
        return replace(row.request)

    async def finish(self, request_id: str, outcome: dict[str, Any]) -> None:
        row = self.rows.get(request_id)
        if row is not None and row.state is RequestState.CLAIMED:
            row.state, row.outcome = RequestState.DONE, outcome

    async def progress(self, request_id: str) -> RequestProgress | None:
        row = self.rows.get(request_id)
        return None if row is None else RequestProgress(row.state, row.outcome)

    async def abandon(self, request_id: str) -> bool:
        row = self.rows.get(request_id)
        if row is None or row.state is not RequestState.PENDING:
            return False
        row.state = RequestState.ABANDONED
        return True

    async def forget(self, request_id: str) -> None:
        self.rows.pop(request_id, None)

    async def pending_for(self, holder: str) -> list[str]:
        return [
            i
            for i, r in self.rows.items()
            if r.request.holder == holder and r.state is RequestState.PENDING
        ]

    async def sweep(self, replica: str) -> None:
        self.rows = {i: r for i, r in self.rows.items() if r.request.sender != replica}
        self.questions = {i: q for i, q in self.questions.items() if q.holder != replica}

    async def post_question(self, question: AskedQuestion, now: datetime) -> None:
        self.questions[question.id] = question

    async def settle_question(self, question_id: str) -> None:
        self.questions.pop(question_id, None)

    async def question(self, question_id: str) -> AskedQuestion | None:
        return self.questions.get(question_id)

    async def questions_of(self, session_id: str, now: datetime) -> list[AskedQuestion]:
        holder = await self._leases.live_holder(SessionId(session_id), now)
        return [
            q for q in self.questions.values() if q.session_id == session_id and q.holder == holder
        ]
