"""One question (a permission request, or an elicitation) put to every client attached to
a session that can answer it.

Every live client gets its own copy, and so does one that goes live while the question is
pending; a question some clients cannot show (an elicitation a client did not advertise)
goes only to those that can. The first answer wins, whatever it says; the other copies
are withdrawn. A copy answered with an error leaves the others waiting; when no copy is
left and none could be answered, the question is unavailable (the tool does not run), as
with one client. Copies lost with their client are not errors: the question waits for the
next client to attach, up to the caller's bound (the permission timeout).

What a question is and what its answer says are typed (application.ports.questions); how
a client shows one and how its answer reads are the client's business.
"""

import asyncio
import logging
import uuid
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from application.ports.clients import (
    CallWithdrawn,
    Client,
    ClientFailed,
    ClientGone,
    ShownQuestion,
)
from application.ports.permissions import PermissionUnavailable
from application.ports.questions import Answer, PermissionQuestion, Question

log = logging.getLogger(__name__)

C = TypeVar("C", bound=Client)


class QuestionRelay(Protocol):
    """Where a permission request is posted for the clients of other replicas (issue 32):
    each replica shows it to its own; an answer there comes back through `Questions.answer`.
    Failing to post or settle only costs those copies: it is logged, the question stands."""

    @abstractmethod
    async def posted(self, question_id: str, question: PermissionQuestion) -> None: ...

    @abstractmethod
    async def settled(self, session_id: str, question_id: str) -> None: ...


@dataclass(slots=True, eq=False)
class _Question(Generic[C]):
    """One pending question and its copies, one per client."""

    id: str
    question: Question
    answer: "asyncio.Future[Answer]"
    eligible: Callable[[C], bool] = lambda _client: True  # who can show it
    copies: dict[C, ShownQuestion | None] = field(default_factory=dict)
    waiting: set["asyncio.Task[None]"] = field(default_factory=set)
    errors: int = 0
    failure: str = ""  # the last copy's error, for the refusal the model is told
    sending: bool = True  # the first copies are still going out: too early to give up

    @property
    def subject(self) -> str | None:
        """The tool call a permission request is about, which a newly attached client is
        told (None: not a permission request, nothing to tell)."""
        asked = self.question
        return asked.subject if isinstance(asked, PermissionQuestion) else None

    @property
    def kind(self) -> str:  # for the log
        return "a permission request" if self.subject is not None else "an elicitation"

    async def send_to(self, client: C) -> None:
        if client in self.copies or self.answer.done() or not self.eligible(client):
            return
        self.copies[client] = None  # claimed: a concurrent go-live sends no second copy
        try:
            call = await client.show(self.question)
        except ClientGone:
            self.copies.pop(client, None)
            return
        except ClientFailed as exc:  # its transport cannot carry it (over the event size limit)
            log.warning("could not send %s to a client: %s", self.kind, exc.message)
            self.copies.pop(client, None)
            self.failed(exc.message)
            return
        if client not in self.copies or self.answer.done():
            # Decided (or the client left) while the copy was on its way: withdraw it too,
            # or that client's dialog waits for an answer nobody reads.
            self.copies.pop(client, None)
            await call.withdraw()
            return
        self.copies[client] = call
        task = asyncio.ensure_future(self._read(client, call))
        self.waiting.add(task)
        task.add_done_callback(self.waiting.discard)

    async def _read(self, client: C, call: ShownQuestion) -> None:
        try:
            result = await call.answer()
        except (CallWithdrawn, asyncio.CancelledError):
            return
        except ClientGone:
            self.copies.pop(client, None)  # the next client to attach gets its copy
            return
        except ClientFailed as exc:
            log.warning("client answered %s with error %s: %s", self.kind, exc.code, exc.message)
            self.copies.pop(client, None)
            self.failed(exc.message)
            return
        # A copy no longer in `copies` was withdrawn (its client left): its answer is late.
        if not self.answer.done() and self.copies.get(client) is call:
            del self.copies[client]  # the winner: nothing to withdraw
            self.answer.set_result(result)

    def failed(self, reason: str) -> None:
        self.errors += 1
        self.failure = reason
        self.give_up_if_none_left()

    def give_up_if_none_left(self) -> None:
        """No copy is left to answer and one failed: unavailable (the tool does not run).
        Not while the first copies are still being sent."""
        if not self.copies and self.errors and not self.sending and not self.answer.done():
            self.answer.set_exception(
                PermissionUnavailable(f"the client could not show the request ({self.failure})")
            )

    def leave(self, client: C) -> "asyncio.Task[None] | None":
        """`client` left the session: its copy no longer counts (withdrawn, a late answer
        ignored). The question then waits for the others, or for the next client."""
        call = self.copies.pop(client, None)
        if call is None:
            return None
        return asyncio.ensure_future(call.withdraw())  # its reader ends with CallWithdrawn

    async def withdraw_rest(self) -> None:
        for call in list(self.copies.values()):
            if call is not None:
                await call.withdraw()
        self.copies.clear()
        for task in list(self.waiting):
            task.cancel()


class Questions(Generic[C]):
    """The pending questions of each session: a turn asks one at a time, but an MCP
    server of the session may ask beside it."""

    def __init__(self, live: Callable[[str], Sequence[C]]) -> None:
        self._live = live  # the session's clients past their replay
        self.relay: QuestionRelay | None = None  # other replicas' clients (None: none)
        self._pending: dict[str, list[_Question[C]]] = {}
        self._leaving: set[asyncio.Task[None]] = set()

    async def ask(
        self,
        asked: Question,
        *,
        eligible: Callable[[C], bool] | None = None,
        mirrored: str | None = None,
    ) -> Answer:
        """The first answer from the clients `eligible` allows (all by default). Raises
        PermissionUnavailable when no client could be asked; cancelled, it withdraws every
        copy. A permission request is also posted to the other replicas (the relay), unless
        it is `mirrored`: this replica's copy of another's question of that id, whose
        answer its caller takes back there."""
        session_id = asked.session_id
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        question: _Question[C] = _Question(mirrored or uuid.uuid4().hex, asked, future)
        if eligible is not None:
            question.eligible = eligible
        self._pending.setdefault(session_id, []).append(question)
        # This replica's own permission request: the other replicas' clients see it too.
        own = asked if isinstance(asked, PermissionQuestion) and mirrored is None else None
        relay = self.relay if own is not None else None
        try:
            for client in self._live(session_id):
                await question.send_to(client)
            if relay is not None and own is not None:  # after the copies here: they need
                await _quietly(relay.posted(question.id, own))  # not wait for the database
            question.sending = False
            question.give_up_if_none_left()
            return await question.answer
        finally:
            pending = self._pending.get(session_id, [])
            if question in pending:
                pending.remove(question)
            if not pending:
                self._pending.pop(session_id, None)
            await asyncio.shield(question.withdraw_rest())
            if relay is not None:  # the other replicas withdraw their copies
                await asyncio.shield(_quietly(relay.settled(session_id, question.id)))

    def answer(self, question_id: str, result: Answer) -> bool:
        """An answer from a client of another replica: the first answer wins, as here.
        False: the question is decided already (or was never asked here)."""
        for questions in self._pending.values():
            for question in questions:
                if question.id == question_id and not question.answer.done():
                    question.answer.set_result(result)
                    return True
        return False

    def asked(self, question_id: str) -> bool:
        """A question of that id is pending here (a mirror of another replica's, say)."""
        return any(q.id == question_id for qs in self._pending.values() for q in qs)

    def subject(self, session_id: str) -> str | None:
        """The tool call a pending permission request of the session is about, if one is."""
        subjects = (q.subject for q in self._pending.get(session_id, ()))
        return next((s for s in subjects if s is not None), None)

    async def went_live(self, session_id: str, client: C) -> None:
        """A client attached while questions are pending: it gets its own copies."""
        for question in list(self._pending.get(session_id, ())):
            await question.send_to(client)

    def left(self, session_id: str, client: C) -> None:
        for question in list(self._pending.get(session_id, ())):
            task = question.leave(client)
            if task is not None:
                self._leaving.add(task)
                task.add_done_callback(self._withdrawn)

    def _withdrawn(self, task: "asyncio.Task[None]") -> None:
        self._leaving.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("withdrawing a question's copy failed: %r", exc)


async def _quietly(posting: "asyncio.Future[None] | Any") -> None:
    """Posting to the other replicas failed: logged; the question stands here."""
    try:
        await posting
    except Exception as exc:
        log.warning("could not relay a question to the other replicas: %r", exc)
