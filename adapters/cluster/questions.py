"""Permission requests across replicas (issue 32): a turn's request is shown by every
replica to its own clients of the session, the first answer anywhere wins, and the other
copies are withdrawn (`$/cancel_request`) wherever they are.

The turn's replica (the holder) posts the question (asked_questions) and signals it on
`iac_code_rq_questions`; a replica with clients attached to the session asks them through
its room (a mirror of the question: their copies, withdrawn when it ends) and routes the
first answer back to the holder (routing.py), which takes it if it is the
first. Once decided the holder deletes the row and signals it settled: every mirror ends.
A client going live later on any replica finds the pending question in the database.
The question travels typed (question_codec): each replica's clients are shown it in their
own protocol version's shape.
"""

import asyncio
import json
import logging
from typing import Any

from adapters.cluster.question_codec import (
    KIND,
    decoded_answer,
    decoded_question,
    encoded_answer,
    encoded_question,
)
from adapters.cluster.routing import QUESTIONS_CHANNEL, RequestRouter
from adapters.cluster.side_tasks import SideTasks
from adapters.cluster.signal_messages import decoded_signal
from adapters.protocol.connection import Connection
from application.attachments.asking import QuestionRelay
from application.attachments.room import Attachments
from application.errors import StorageError
from application.ports.clock import Clock
from application.ports.cluster_signals import ClusterSignals
from application.ports.permissions import PermissionUnavailable
from application.ports.questions import PermissionQuestion
from application.ports.routed_requests import AskedQuestion, RoutedRequests

log = logging.getLogger(__name__)

# The routed request carrying a mirror's answer to the holder (never a client's method).
ANSWER_METHOD = "$/iac_code/permission_answer"


class RelayedQuestions(QuestionRelay):
    def __init__(
        self,
        *,
        room: Attachments[Connection],
        store: RoutedRequests,
        signals: ClusterSignals,
        router: RequestRouter,
        clock: Clock,
        replica_id: str,
        poll: float = 1.0,
    ) -> None:
        self._room = room
        self._poll = poll  # how often a mirror checks that its question still stands
        self._store = store
        self._signals = signals
        self._router = router
        self._clock = clock
        self._me = replica_id
        self._mirrors: dict[str, tuple[str, asyncio.Task[None]]] = {}  # id: (session, task)
        self._side = SideTasks("relaying questions", log)

    async def start(self) -> None:
        self._room.relay_questions(self)
        self._room.on_live(self._went_live)
        await self._signals.subscribe(QUESTIONS_CHANNEL, self._on_message, self._on_resync)

    # -- the holder's side (QuestionRelay) -----------------------------------------------

    async def posted(self, question_id: str, asked: PermissionQuestion) -> None:
        question = AskedQuestion(
            id=question_id,
            session_id=asked.session_id,
            holder=self._me,
            subject=asked.subject,
            kind=KIND,
            body=encoded_question(asked),
        )
        await self._store.post_question(question, self._clock.now())
        await self._announce("posted", question)

    async def settled(self, session_id: str, question_id: str) -> None:
        await self._store.settle_question(question_id)
        message = {"op": "settled", "session": session_id, "id": question_id}
        await self._signals.publish(QUESTIONS_CHANNEL, json.dumps(message))

    def answered_here(self, params: dict[str, Any]) -> dict[str, Any]:
        """A mirror's answer, routed here (ANSWER_METHOD): taken if it is the first."""
        question_id, answer = params.get("questionId"), decoded_answer(params.get("answer"))
        taken = isinstance(question_id, str) and self._room.answer_question(question_id, answer)
        return {"accepted": taken}

    async def _announce(self, op: str, question: AskedQuestion) -> None:
        message = {"op": op, "session": question.session_id, "id": question.id}
        await self._signals.publish(QUESTIONS_CHANNEL, json.dumps(message | {"holder": self._me}))

    # -- every other replica's side --------------------------------------------------------

    def _on_message(self, payload: str) -> None:
        message = decoded_signal(payload, "question", "op", "session", "id")
        if message is None:
            return
        op, session_id, question_id = message["op"], message["session"], message["id"]
        if op == "posted" and message.get("holder") != self._me:
            if self._room.peers_of(session_id):
                self._side.spawn(self._mirror_posted(session_id, str(question_id)))
        elif op == "settled":
            self._end_mirror(str(question_id))

    def _on_resync(self) -> None:
        """Signals may have been missed: mirrors of settled questions end, and the sessions
        with clients here look for questions posted meanwhile."""
        mirrored = {session for session, _ in self._mirrors.values()}
        for session_id in mirrored | set(self._room.followed()):
            self._side.spawn(self._mirror_session(session_id, recheck=True))

    def _went_live(self, session_id: str, client: Connection) -> None:
        self._side.spawn(self._mirror_session(session_id))

    async def _mirror_posted(self, session_id: str, question_id: str) -> None:
        question = await self._store.question(question_id)
        if question is not None:
            self._mirror(question)

    async def _mirror_session(self, session_id: str, *, recheck: bool = False) -> None:
        pending = await self._store.questions_of(session_id, self._clock.now())
        if recheck:
            live = {q.id for q in pending}
            for question_id, (session, _) in list(self._mirrors.items()):
                if session == session_id and question_id not in live:
                    self._end_mirror(question_id)
        for question in pending:
            if question.holder != self._me and self._room.peers_of(session_id):
                self._mirror(question)

    def _mirror(self, question: AskedQuestion) -> None:
        if question.id in self._mirrors or self._room.asked(question.id):
            return
        task = self._side.spawn(self._ask_here(question))
        self._mirrors[question.id] = (question.session_id, task)
        task.add_done_callback(lambda _: self._mirrors.pop(question.id, None))

    def _end_mirror(self, question_id: str) -> None:
        mirror = self._mirrors.pop(question_id, None)
        if mirror is not None:
            mirror[1].cancel()  # the room withdraws its copies

    async def _ask_here(self, question: AskedQuestion) -> None:
        asked = decoded_question(question.kind, question.body)
        if asked is None:
            return  # not to be shown here: the other replicas' clients may
        asking = asyncio.ensure_future(self._room.ask_mirror(question.id, asked))
        standing = asyncio.ensure_future(self._while_standing(question))
        try:
            await asyncio.wait({asking, standing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            standing.cancel()
            if not asking.done():  # settled unseen, or its holder died: the copies go
                asking.cancel()
            await asyncio.gather(asking, standing, return_exceptions=True)
        if asking.cancelled() or isinstance(asking.exception(), PermissionUnavailable):
            return  # no client here could show it: the other replicas' may
        params = {"questionId": question.id, "answer": encoded_answer(asking.result())}
        try:
            outcome = await self._router.to_replica(
                question.holder, question.session_id, ANSWER_METHOD, params
            )
        except Exception as exc:  # the holder stopped, or the database failed
            log.warning("the answer to question %s did not reach its turn: %r", question.id, exc)
            return
        if not (isinstance(outcome, dict) and outcome.get("accepted")):
            log.info("question %s was decided elsewhere first", question.id)

    async def _while_standing(self, question: AskedQuestion) -> None:
        """Returns once the question no longer stands: settled (a signal may be lost), or
        its holder's lease lapsed (the replica died: nobody will settle it)."""
        while True:
            await asyncio.sleep(self._poll)  # a period, not a synchronisation
            try:
                pending = await self._store.questions_of(question.session_id, self._clock.now())
            except StorageError:
                continue
            if all(q.id != question.id for q in pending):
                return
