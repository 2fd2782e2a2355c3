"""The room for the shared session: the clients attached to each session, and what
follows as they come and go.

- attach: `session/new` and `session/fork` attach their sender live; `session/load`,
  `session/resume` and a restored connection attach it held (`live=False`) until its replay
  is sent (`went_live`). Who may act, and who controls, follows the ownership rules.
- adoption: a prompt accepted on a session nobody is attached to attaches its sender, and
  stops the clock of an earlier turn left alone (it would cancel this one).
- hand-over: a prompt accepted from an attached client makes it the controller; one
  refused (busy, no key, not open) gives control back, and undoes an adoption.
- leaving: when the last client leaves (its connection gone), an idle session is closed
  and a running turn gets the detached clock; `session/close` from the last one closes
  the session (cancelling its turn). Neither while another client's attach is under way.
- a client already gone that a late call attaches leaves again at once.
- questions: a permission request (or an elicitation, to the clients that can show it)
  goes to every live client, the first answer winning.

The use cases it needs (close a session, is a turn running) come in as callables; the
clients are lent through application.ports.clients.
"""

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

from application.attachments.arrivals import Arrivals
from application.attachments.asking import QuestionRelay, Questions
from application.attachments.detached import DetachedSessions, Schedule, call_later
from application.attachments.ownership import NotAttached, Ownership, Role
from application.attachments.turn_state import TurnPhase, TurnState
from application.errors import ApplicationError, AuthRequired, SessionBusy, SessionNotFound
from application.ports.clients import Client, SessionClients
from application.ports.elicitation import ElicitationAnswer
from application.ports.permissions import PermissionUnavailable
from application.ports.questions import (
    Answer,
    ElicitationQuestion,
    PermissionAnswer,
    PermissionQuestion,
)
from domain.errors import DomainError

Close = Callable[[str], Awaitable[object]]  # close the session (cancels a running turn)
Busy = Callable[[str], bool]  # is a prompt running in this session?
# The kind of client the room holds: the adapter lending them reads them as its own (a
# protocol connection, say), the room only as clients.
C = TypeVar("C", bound=Client)

# Called when a client leaves a session (close, disconnect, delete): e.g. to drop its feed.
OnLeft = Callable[[str, C], None]
# Called when a client goes live on a session (its replay sent).
OnLive = Callable[[str, C], None]
# Called when a client attaches to a session it was not attached to (e.g. to follow the
# session's turns on other replicas).
OnJoined = Callable[[str, C], None]

DEFAULT_DETACHED_TURN_TIMEOUT = 300.0
_REFUSED = (SessionBusy, AuthRequired, SessionNotFound)  # a prompt never accepted


class Attachments(SessionClients[C], Generic[C]):
    def __init__(
        self,
        *,
        close: Close,
        busy: Busy,
        detached_timeout: float = DEFAULT_DETACHED_TURN_TIMEOUT,
        schedule: Schedule = call_later,
    ) -> None:
        self._close = close
        self._busy = busy
        self._ownership: Ownership[C] = Ownership()
        self._held: set[tuple[str, C]] = set()  # attached, their replay under way
        self._detached = DetachedSessions(detached_timeout, self._expire, schedule=schedule)
        self._arrivals = Arrivals()
        self._questions: Questions[C] = Questions(self.live_peers)
        # Clients gone (`client_gone` ran): a call of theirs still in flight that attaches
        # them afterwards must detach them again, or the session keeps a dead client.
        self._gone: weakref.WeakSet[C] = weakref.WeakSet()
        self._waiting: dict[C, set[asyncio.Task[Any]]] = {}  # handlers awaiting turns
        self._on_left: list[OnLeft[C]] = []
        self._on_live: list[OnLive[C]] = []
        self._on_joined: list[OnJoined[C]] = []
        self._elsewhere: Callable[[str], bool] = lambda _session_id: False

    # -- who is attached -----------------------------------------------------------------

    def peers_of(self, session_id: str) -> list[C]:
        return self._ownership.peers_of(session_id)

    def live_peers(self, session_id: str) -> list[C]:
        """The attached clients already past their replay."""
        return [c for c in self.peers_of(session_id) if (session_id, c) not in self._held]

    def followed(self) -> list[str]:
        """The sessions with a client attached here."""
        return self._ownership.followed()

    def sessions_of(self, client: C) -> list[str]:
        return self._ownership.sessions_of(client)

    def controller_of(self, session_id: str) -> C | None:
        """Whose capabilities (files, terminals) serve the session."""
        return self._ownership.controller_of(session_id)

    def is_attached(self, session_id: str, client: C) -> bool:
        return self._ownership.is_attached(session_id, client)

    def role(self, session_id: str, client: C) -> Role:
        return self._ownership.role_of(session_id, client) or Role.OBSERVER

    def check_may_act(self, session_id: str, client: C) -> None:
        """Raises NotAttached when other clients hold the session and this one does not
        (clients attached on other replicas count)."""
        self._ownership.check_may_act(session_id, client)
        if not self.is_attached(session_id, client) and self._elsewhere(session_id):
            raise NotAttached(session_id)

    def followed_elsewhere_by(self, check: Callable[[str], bool]) -> None:
        """`check(session_id)`: are clients attached to it on other replicas? Such a
        session is not left alone when its last client here leaves."""
        self._elsewhere = check

    async def nobody_elsewhere(self, session_id: str) -> None:
        """The last client attached on another replica left: a running turn nobody here
        follows either gets the detached clock."""
        if not self.peers_of(session_id) and self._busy(session_id):
            await self._left_alone(session_id)

    def may_cancel(self, session_id: str, client: C) -> bool:
        return self._ownership.may_cancel(session_id, client)

    def running_elsewhere(self, session_id: str, client: C) -> bool:
        """Another client's prompt is writing the session's history (a fork would read it
        half written; its controller may)."""
        controller = self.controller_of(session_id)
        return controller is not None and controller is not client and self._busy(session_id)

    # -- attaching and detaching ---------------------------------------------------------

    def attach(self, session_id: str, client: C, *, live: bool = True) -> Role:
        """Live at once (a session it just created: nothing to replay), or held until
        `went_live` (its replay under way). Attaching again changes nothing but that."""
        joining = not self._ownership.is_attached(session_id, client)
        role = self._ownership.attach(session_id, client)
        if not live:
            self._held.add((session_id, client))
        if joining:
            for listener in self._on_joined:
                listener(session_id, client)
        return role

    async def went_live(self, session_id: str, client: C) -> None:
        """Its replay is sent: it is live, and gets its copy of a pending question."""
        self._held.discard((session_id, client))
        await self._questions.went_live(session_id, client)
        for listener in self._on_live:
            listener(session_id, client)

    def detach(self, session_id: str, client: C) -> bool:
        """Only the detach; True when it was the last attached (and was attached)."""
        attached = self.is_attached(session_id, client)
        last = self._ownership.detach(session_id, client)
        self._held.discard((session_id, client))
        if attached:
            self._left(session_id, client)
        return last

    def forget(self, session_id: str) -> None:
        """The session is deleted: nobody is attached, and no clock runs for it."""
        self._detached.stop(session_id)
        for client in self._ownership.forget(session_id):
            self._held.discard((session_id, client))
            self._left(session_id, client)

    def on_left(self, listener: OnLeft[C]) -> None:
        self._on_left.append(listener)

    def on_live(self, listener: OnLive[C]) -> None:
        self._on_live.append(listener)

    def on_joined(self, listener: OnJoined[C]) -> None:
        self._on_joined.append(listener)

    def _left(self, session_id: str, client: C) -> None:
        self._questions.left(session_id, client)  # it may no longer answer
        for listener in self._on_left:
            listener(session_id, client)

    # -- the lifecycle -------------------------------------------------------------------

    async def client_gone(self, client: C) -> None:
        """Its connection went away: it detaches from every session, and the handlers
        awaiting turns for it stop (their answer has nowhere to go; the turns go on)."""
        self._gone.add(client)
        for task in self._waiting.pop(client, set()):
            task.cancel()
        await self._leave(self.sessions_of(client), client)

    async def unless_gone(self, session_id: str, client: C) -> None:
        """`client` was just attached by a call that was in flight as it went away: it
        leaves again, as it would have had the call been quicker."""
        if client in self._gone and self.is_attached(session_id, client):
            await self._leave([session_id], client)

    @contextlib.contextmanager
    def waiting(self, client: C) -> Iterator[None]:
        """The current task awaits a turn for `client`: cancelled should `client` go."""
        handler = asyncio.current_task()
        waiting = self._waiting.setdefault(client, set())
        if handler is not None:
            waiting.add(handler)
        try:
            yield
        finally:
            if handler is not None:
                waiting.discard(handler)

    @contextlib.asynccontextmanager
    async def arriving(self, session_id: str) -> AsyncIterator[None]:
        """A client is being attached (its session read meanwhile): the detached clock
        stops now, not once the session is read (the deadline passing meanwhile would
        close the session it is being given). Should the attach fail, a session left
        alone meanwhile is closed, or its turn gets its clock again."""
        self._detached.stop(session_id)
        self._arrivals.begin(session_id)
        try:
            yield
        except BaseException:
            self._arrivals.end(session_id)
            if not self.peers_of(session_id) and not self._arrivals.under_way(session_id):
                closed = self._arrivals.settle(session_id)
                if closed:
                    await self._close(session_id)
                elif closed is not None or self._busy(session_id):
                    await self._left_alone(session_id)
            raise
        self._arrivals.end(session_id)
        self._arrivals.settle(session_id)  # the arriving client attaches now

    @contextlib.asynccontextmanager
    async def prompting(
        self, session_id: str, client: C, *, reserved: bool = False
    ) -> AsyncIterator[None]:
        """`client`'s prompt runs inside: accepted, it adopts a session nobody follows
        (attached, it sees its turn) and makes an attached client the controller; refused,
        it changes nothing. `reserved`: the session was kept for this prompt as it was
        read, idle then (QueuePrompts.reserve): it counts as idle."""
        idle = reserved or not self._busy(session_id)
        adopting = idle and not self.peers_of(session_id)
        if adopting:
            self.attach(session_id, client)
            self._detached.stop(session_id)  # that clock was for an earlier turn
            await self.unless_gone(session_id, client)
        taking = self.is_attached(session_id, client) and idle
        previous = self._ownership.take_control(session_id, client) if taking else None
        try:
            yield
        except _REFUSED:
            if taking:
                self._ownership.give_back(session_id, client, previous)
            if adopting:
                await self._leave([session_id], client)
            raise
        except (ApplicationError, DomainError):
            if adopting:  # not run (e.g. not open here): nothing adopted
                await self._leave([session_id], client)
            raise

    def close_by(self, session_id: str, client: C) -> bool:
        """`session/close` from `client`: it detaches. True when the caller is to close the
        session now (cancelling its turn): `client` was the last attached, or nobody was.
        Not while another client's attach is under way: that client keeps it."""
        self.check_may_act(session_id, client)  # another client's is not ours to close
        attached = self.is_attached(session_id, client)
        if attached and not self.detach(session_id, client):
            return False  # others still follow it
        if attached and self._arrivals.under_way(session_id):
            self._arrivals.left(session_id, closed=True)
            return False
        self._detached.stop(session_id)
        return True

    async def _leave(self, session_ids: list[str], client: C) -> None:
        alone = [sid for sid in session_ids if self.detach(sid, client)]
        await asyncio.gather(*(self._left_alone(sid) for sid in alone))

    async def _left_alone(self, session_id: str) -> None:
        """Nobody is attached any more: an idle session is closed, a running turn gets the
        detached clock. Not while a client's attach of it is under way."""
        if self._arrivals.under_way(session_id):
            self._arrivals.left(session_id, closed=False)
        elif self._busy(session_id):
            # Followed on another replica: its turn is not left alone (the clock starts
            # in nobody_elsewhere, once it is).
            if not self._elsewhere(session_id):
                self._detached.start(session_id)
        else:
            await self._close(session_id)

    async def _expire(self, session_id: str) -> None:
        if not self.peers_of(session_id):
            await self._close(session_id)

    # -- the turn, as a client is told it, and the questions it asks ---------------------

    def turn_state(self, session_id: str) -> TurnState:
        if (tool_call_id := self._questions.subject(session_id)) is not None:
            return TurnState(TurnPhase.AWAITING_PERMISSION, tool_call_id)
        return TurnState(TurnPhase.RUNNING if self._busy(session_id) else TurnPhase.IDLE)

    def awaiting_permission(self, session_id: str) -> bool:
        return self._questions.subject(session_id) is not None

    async def ask_permission(self, question: PermissionQuestion) -> PermissionAnswer:
        """To every live client (and each that goes live meanwhile): the first answer.
        Raises PermissionUnavailable when none could be asked."""
        return _permission(await self._questions.ask(question))

    async def ask_some(
        self, question: ElicitationQuestion, eligible: Callable[[C], bool]
    ) -> ElicitationAnswer:
        """To every live client `eligible` allows (and each that goes live meanwhile), the
        first answer winning, as a permission request goes; not a permission request, so
        the turn state a new client is told stays `running`."""
        answer = await self._questions.ask(question, eligible=eligible)
        if not isinstance(answer, ElicitationAnswer):
            raise PermissionUnavailable("the client's answer was not an elicitation's")
        return answer

    # -- questions of turns running on other replicas (issue 32) --------------------------

    def relay_questions(self, relay: QuestionRelay) -> None:
        """Post this replica's permission requests to the clients of the other replicas."""
        self._questions.relay = relay

    async def ask_mirror(self, question_id: str, question: PermissionQuestion) -> PermissionAnswer:
        """Another replica's permission request, to this replica's live clients (and each
        that goes live meanwhile): their first answer, for that replica to weigh.
        Cancelled (decided there), it withdraws every copy."""
        return _permission(await self._questions.ask(question, mirrored=question_id))

    def answer_question(self, question_id: str, answer: Answer) -> bool:
        """A client of another replica answered a permission request asked here: True when
        its answer is the first."""
        return self._questions.answer(question_id, answer)

    def asked(self, question_id: str) -> bool:
        return self._questions.asked(question_id)


def _permission(answer: Answer) -> PermissionAnswer:
    """A permission request's answer; any other cannot be read as one (the tool does not
    run)."""
    if not isinstance(answer, PermissionAnswer):
        raise PermissionUnavailable("the client's answer was not a permission request's")
    return answer
